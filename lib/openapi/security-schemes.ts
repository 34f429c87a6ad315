import { isDeepStrictEqual } from 'node:util';
import { componentName, firstFreeName, type JsonObject } from './components.ts';

/** The system JWT of `POST /auth/login`, which every route with system authentication takes. */
export const SYSTEM_BEARER_NAME = 'bearerAuth';
const SYSTEM_BEARER: JsonObject = { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'System JWT (HS256) from POST /auth/login.' };

/**
 * The security schemes the operations use, named from their content (`x-api-key`, `bearerAuth`);
 * one declared by several routes is listed once; a different one wanting a taken name is told
 * apart by where it is declared (`bearerAuth.metrics`: the plain name is the system JWT's), then by a number.
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
    const names = candidates.map(componentName);
    for (const name of names) {
      const known = this.#schemes[name];
      if (known === undefined || isDeepStrictEqual(known, scheme)) {
        this.#schemes[name] = scheme;
        return name;
      }
    }
    const name = firstFreeName(names.at(-1) as string, (candidate) => candidate in this.#schemes && !isDeepStrictEqual(this.#schemes[candidate], scheme));
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
