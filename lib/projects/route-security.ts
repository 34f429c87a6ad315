import { unknownPropertyProblems } from '../values/did-you-mean.ts';
import { frozenJson, isPlainObject, type JsonObject } from '../values/json.ts';
import { kindOf } from '../values/kind-of.ts';

/** The fields each type of OpenAPI security scheme requires, and those it may have. */
const SCHEME_FIELDS: Readonly<Record<string, { readonly required: readonly string[]; readonly optional: readonly string[] }>> = {
  apiKey: { required: ['name', 'in'], optional: [] },
  http: { required: ['scheme'], optional: ['bearerFormat'] },
  mutualTLS: { required: [], optional: [] },
  oauth2: { required: ['flows'], optional: [] },
  openIdConnect: { required: ['openIdConnectUrl'], optional: [] },
};
const SCHEME_TYPES = Object.keys(SCHEME_FIELDS);
const API_KEY_PLACES = ['query', 'header', 'cookie'];

export interface ReadSecurity {
  readonly problems: readonly string[];
  /** The declared schemes, any one of which the route accepts; undefined when none is declared or one is malformed. */
  readonly schemes: readonly JsonObject[] | undefined;
}

/**
 * A route's `security`: OpenAPI security schemes (one or a non-empty array) describing what its
 * custom `auth` reads, so that `/openapi.json` lists it and `/docs` lets a reader send it.
 */
export function readRouteSecurity(declared: unknown, hasCustomAuth: boolean): ReadSecurity {
  if (declared === undefined) return { problems: [], schemes: undefined };
  if (!hasCustomAuth) {
    const problem = 'security describes what a custom `auth` function reads, and this route has none (a route with system authentication is documented with the system JWT; a public route reads no credential)';
    return { problems: [problem], schemes: undefined };
  }
  const listed = Array.isArray(declared) ? declared : [declared];
  if (listed.length === 0 || (!Array.isArray(declared) && !isPlainObject(declared))) {
    return { problems: [`security must be a security scheme object or a non-empty array of them (got ${Array.isArray(declared) ? 'an empty array' : kindOf(declared)})`], schemes: undefined };
  }
  const problems = listed.flatMap((scheme: unknown, index) => schemeProblems(scheme, Array.isArray(declared) ? `security[${index}]` : 'security'));
  return problems.length > 0 ? { problems, schemes: undefined } : { problems, schemes: Object.freeze(listed.map((scheme: object) => frozenJson(scheme))) };
}

function schemeProblems(scheme: unknown, where: string): string[] {
  if (!isPlainObject(scheme)) return [`${where} must be a security scheme object (got ${kindOf(scheme)})`];
  const fields = typeof scheme.type === 'string' && Object.hasOwn(SCHEME_FIELDS, scheme.type) ? SCHEME_FIELDS[scheme.type] : undefined;
  if (fields === undefined) return [`${where}.type must be one of ${SCHEME_TYPES.map((type) => `"${type}"`).join(', ')} (got ${describe(scheme.type)})`];
  const problems: string[] = [];
  for (const field of fields.required) {
    if (scheme[field] === undefined) problems.push(`${where}.${field} is missing (a security scheme of type "${scheme.type}" needs ${fields.required.join(' and ')})`);
  }
  for (const field of ['description', 'name', 'scheme', 'bearerFormat', 'openIdConnectUrl']) {
    const value = scheme[field];
    if (value !== undefined && (typeof value !== 'string' || value === '')) problems.push(`${where}.${field} must be a non-empty string (got ${describe(value)})`);
  }
  if (scheme.type === 'apiKey' && scheme.in !== undefined && !API_KEY_PLACES.includes(scheme.in as string)) {
    problems.push(`${where}.in must be "query", "header" or "cookie" (got ${describe(scheme.in)})`);
  }
  if (scheme.flows !== undefined && !isPlainObject(scheme.flows)) problems.push(`${where}.flows must be an OAuth flows object (got ${kindOf(scheme.flows)})`);
  const known = ['type', 'description', ...fields.required, ...fields.optional, ...Object.keys(scheme).filter((key) => key.startsWith('x-'))];
  problems.push(...unknownPropertyProblems(scheme, known, `${where}.`));
  return problems;
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : kindOf(value);
}
