import type { AuthMode, MountedRoute } from '../projects/types.ts';
import { BEARER_SCHEME, errorResponses, rateLimitHeaders, ref, type Json, type JsonObject } from './components.ts';

/** `:id` (and a `*rest` wildcard) in a route path; OpenAPI writes them `{id}`. */
const ROUTE_PARAMETER = /[:*]([A-Za-z_$][\w$]*)/g;
const TEMPLATE_PARAMETER = /\{([^}]+)\}/g;

const ANY_BODY: JsonObject = {
  'application/json': {},
  'application/x-www-form-urlencoded': {},
  'multipart/form-data': {},
  'text/plain': {},
};

/** One path item per URL template; every URL of every route is listed (SPEC §12). */
export function projectPaths(routes: readonly MountedRoute[]): Record<string, Record<string, Json>> {
  const paths: Record<string, Record<string, Json>> = {};
  const templateByShape = new Map<string, string>();
  for (const route of routes) {
    for (const url of route.urls) {
      const template = openApiTemplate(url);
      // OpenAPI treats /a/{id} and /a/{key} as one path: the first spelling names the parameter.
      const shape = template.replace(TEMPLATE_PARAMETER, '{}');
      const key = templateByShape.get(shape) ?? template;
      templateByShape.set(shape, key);
      paths[key] ??= { parameters: pathParameters(key) };
      paths[key][route.method.toLowerCase()] = projectOperation(route);
    }
  }
  return paths;
}

/** `/api/sample/items/:id` → `/api/sample/items/{id}`; optional groups are flattened. */
export function openApiTemplate(url: string): string {
  return url.replace(/[{}]/g, '').replace(ROUTE_PARAMETER, '{$1}');
}

function pathParameters(template: string): Json[] {
  const names = new Set([...template.matchAll(TEMPLATE_PARAMETER)].map((match) => match[1]));
  const parameters: Json[] = [ref('parameters', 'Tenant')];
  for (const name of names) parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  return parameters;
}

function projectOperation(route: MountedRoute): JsonObject {
  const hasBody = route.method === 'POST' || route.method === 'PUT';
  return {
    tags: [route.project],
    summary: `${route.method} ${route.path} of project ${route.project}`,
    'x-spaceport-auth': route.auth,
    ...AUTHENTICATION[route.auth],
    ...(hasBody ? { requestBody: { required: false, content: ANY_BODY } } : {}),
    responses: {
      '200': { description: 'Answered by the handler.', ...(route.auth === 'public' ? { headers: rateLimitHeaders } : {}) },
      ...errorResponses(...ERROR_STATUSES[route.auth]),
    },
  };
}

const AUTHENTICATION: Readonly<Record<AuthMode, JsonObject>> = {
  system: { security: [{ [BEARER_SCHEME]: [] }], description: 'Needs a system JWT.' },
  public: { security: [], description: 'Public; rate-limited per client address and tenant.' },
  custom: { description: "Custom authentication: the project's own `auth` function decides (no standard scheme)." },
};

const ERROR_STATUSES: Readonly<Record<AuthMode, number[]>> = {
  system: [400, 401, 403, 413, 500, 504],
  public: [400, 403, 413, 429, 500, 504],
  custom: [400, 401, 403, 413, 500, 504],
};
