import { isDeepStrictEqual } from 'node:util';
import type { JsonObject } from './components.ts';

/** Component names OpenAPI allows. */
const UNSAFE_NAME_CHARACTERS = /[^A-Za-z0-9._-]+/g;

/** The system JWT of `POST /auth/login`, which every route with system authentication takes. */
export const SYSTEM_BEARER_NAME = 'bearerAuth';
const SYSTEM_BEARER: JsonObject = { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'System JWT (HS256) from POST /auth/login.' };

/**
 * The security schemes the document's operations use, for `components.securitySchemes`. A
 * scheme gets a name from its content (`x-api-key` for an API key in that header, `bearerAuth`
 * for a bearer token); the same scheme declared by several routes is listed once; a different
 * one wanting a taken name is told apart by where it is declared (`bearerAuth.metrics`, the
 * plain name reserved for the system JWT), then by a number. Names follow the order routes are
 * listed in, so they stay the same from one start to the next.
 */
export class SecuritySchemes {
  readonly #schemes: Record<string, JsonObject> = {};

  /** The security requirement of a route with system authentication. */
  systemJwt(): JsonObject {
    return { [this.#add([SYSTEM_BEARER_NAME], SYSTEM_BEARER)]: [] };
  }

  /** A route's declared schemes, as alternatives of its `security` (any one is accepted). */
  requirements(schemes: readonly JsonObject[], declaredIn: string): JsonObject[] {
    return schemes.map((scheme) => {
      const base = baseName(scheme);
      const qualified = `${base}.${declaredIn}`;
      const name = this.#add(base === SYSTEM_BEARER_NAME && !isDeepStrictEqual(scheme, SYSTEM_BEARER) ? [qualified] : [base, qualified], scheme);
      return { [name]: [] };
    });
  }

  get schemes(): Readonly<Record<string, JsonObject>> {
    return this.#schemes;
  }

  #add(candidates: readonly string[], scheme: JsonObject): string {
    const names = candidates.map((candidate) => candidate.replace(UNSAFE_NAME_CHARACTERS, '_'));
    for (const name of names) {
      const known = this.#schemes[name];
      if (known === undefined || isDeepStrictEqual(known, scheme)) {
        this.#schemes[name] = scheme;
        return name;
      }
    }
    const last = names.at(-1) as string;
    let name = last;
    for (let suffix = 2; name in this.#schemes && !isDeepStrictEqual(this.#schemes[name], scheme); suffix += 1) name = `${last}_${suffix}`;
    this.#schemes[name] = scheme;
    return name;
  }
}

/** `x-api-key` (an API key in that header), `token.query`, `bearerAuth`, `basicAuth`, `oauth2`... */
function baseName(scheme: JsonObject): string {
  if (scheme.type === 'apiKey') return scheme.in === 'header' ? String(scheme.name) : `${String(scheme.name)}.${String(scheme.in)}`;
  if (scheme.type === 'http') return `${String(scheme.scheme).toLowerCase()}Auth`;
  return String(scheme.type);
}
