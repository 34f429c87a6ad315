import type { JsonObject } from '../values/json.ts';
import { TENANT_NAME } from '../values/tenant-name.ts';

export type { Json, JsonObject } from '../values/json.ts';

/** Characters OpenAPI refuses in a component name. */
const UNSAFE_NAME_CHARACTERS = /[^A-Za-z0-9._-]+/g;

/** `text` with what a component name may not hold replaced by `_`. */
export function componentName(text: string): string {
  return text.replace(UNSAFE_NAME_CHARACTERS, '_');
}

/** `wanted`, else the first of `wanted_2`, `wanted_3`... that is not `taken`: names stay the same from one start to the next. */
export function firstFreeName(wanted: string, taken: (name: string) => boolean, separator = '_'): string {
  let name = wanted;
  for (let suffix = 2; taken(name); suffix += 1) name = `${wanted}${separator}${suffix}`;
  return name;
}

/** `{ $ref }` to an entry of `components`. */
export function ref(section: 'schemas' | 'responses' | 'parameters', name: string): JsonObject {
  return { $ref: `#/components/${section}/${name}` };
}

export function jsonContent(schema: JsonObject): JsonObject {
  return { 'application/json': { schema } };
}

export function jsonResponse(description: string, schema: JsonObject, headers?: JsonObject): JsonObject {
  return { description, content: jsonContent(schema), ...(headers ? { headers } : {}) };
}

/** The error answers of SPEC §7, keyed by status, for an operation's `responses`. */
export function errorResponses(...statuses: number[]): JsonObject {
  return Object.fromEntries(statuses.map((status) => [String(status), ref('responses', ERROR_RESPONSE_NAMES[status] ?? 'Error')]));
}

const ERROR_RESPONSE_NAMES: Readonly<Record<number, string>> = {
  304: 'NotModified',
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  412: 'PreconditionFailed',
  413: 'PayloadTooLarge',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'GatewayTimeout',
};

const errorBody: JsonObject = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'string', description: 'What went wrong; names the field at fault for a 400.' } },
};

const schemas: JsonObject = {
  Error: errorBody,
  BadRequestError: {
    type: 'object',
    required: ['error'],
    properties: {
      error: { type: 'string', description: 'The first problem, naming the field at fault.' },
      errors: {
        type: 'array',
        description: "Every problem of the request's params, query and body together, when a declared schema fails.",
        items: {
          type: 'object',
          required: ['path', 'message'],
          properties: { path: { type: 'string', description: 'Where: `body.amount`, `query.limit`.' }, message: { type: 'string' } },
        },
      },
    },
  },
  HandlerFailure: {
    type: 'object',
    required: ['success', 'message'],
    properties: { success: { const: false }, message: { type: 'string' } },
  },
};

const rateLimitHeaders: JsonObject = {
  'RateLimit-Limit': { schema: { type: 'integer' }, description: 'Requests allowed in the window.' },
  'RateLimit-Remaining': { schema: { type: 'integer' }, description: 'Requests left in the window.' },
  'RateLimit-Reset': { schema: { type: 'integer' }, description: 'Seconds until the window resets.' },
};

const errorReference = ref('schemas', 'Error');

const responses: JsonObject = {
  BadRequest: jsonResponse(
    'Malformed JSON, invalid or unknown tenant, an invalid field (with every problem in `errors` when a declared schema fails), or an HTTP/1.1 request without a Host header.',
    ref('schemas', 'BadRequestError'),
  ),
  Unauthorized: jsonResponse('Authentication rejected.', errorReference, {
    'WWW-Authenticate': { schema: { type: 'string' }, description: '`Bearer` when the system JWT is missing or refused.' },
  }),
  Forbidden: jsonResponse('Not allowed (role or referer).', errorReference),
  NotFound: jsonResponse('Unknown route, missing resource, or feature disabled.', errorReference),
  MethodNotAllowed: jsonResponse('Known path, other method.', errorReference, { Allow: { schema: { type: 'string' } } }),
  Conflict: jsonResponse('Conflict with an existing resource.', errorReference),
  NotModified: { description: '`If-None-Match` names the current ETag: no body.', headers: { ETag: { schema: { type: 'string' } } } },
  PreconditionFailed: jsonResponse('`If-Match` names none of the current ETags: nothing changed.', errorReference),
  PayloadTooLarge: jsonResponse('Body, file or file count over the limits.', errorReference),
  TooManyRequests: jsonResponse('Rate limit reached.', errorReference, {
    ...rateLimitHeaders,
    'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait.' },
  }),
  InternalError: jsonResponse('Handler failure; the error text is not sent.', ref('schemas', 'HandlerFailure')),
  ServiceUnavailable: jsonResponse('Database unreachable, or a statement cancelled at its time limit: not done, safe to retry.', errorReference),
  GatewayTimeout: jsonResponse('The handler neither answered nor called next in time.', errorReference),
  Error: jsonResponse('Error.', errorReference),
};

const parameters: JsonObject = {
  Tenant: {
    name: 'tenant',
    in: 'header',
    required: false,
    description: 'The tenant; when absent, the configured default tenant.',
    schema: { type: 'string', pattern: TENANT_NAME.source },
  },
};

export { rateLimitHeaders };

/** The shared entries of `components`; the document keeps those its operations use. */
export const components: Readonly<Record<string, JsonObject>> = { schemas, responses, parameters };
