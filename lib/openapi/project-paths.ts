import type { AuthMode, MountedRoute } from '../projects/types.ts';
import { BEARER_SCHEME, errorResponses, rateLimitHeaders, ref, type Json, type JsonObject } from './components.ts';
import { declaredParameters, declaredRequestBody, declaredResponses, type DeclaredSchemas } from './route-schemas.ts';
import { SchemaComponents } from './schema-components.ts';

/** `:id` (and a `*rest` wildcard) in a route path; OpenAPI writes them `{id}`. */
const ROUTE_PARAMETER = /[:*]([A-Za-z_$][\w$]*)/g;
const TEMPLATE_PARAMETER = /\{([^}]+)\}/g;

const ANY_BODY: JsonObject = {
  'application/json': {},
  'application/x-www-form-urlencoded': {},
  'multipart/form-data': {},
  'text/plain': {},
};

export interface ProjectPathOptions {
  /** `referer.enabled`: every project route may then answer 403. */
  readonly refererValidation: boolean;
}

export interface ProjectPaths {
  readonly paths: Record<string, Record<string, Json>>;
  /** The schemas routes declare, for `components.schemas`. */
  readonly schemas: Readonly<Record<string, JsonObject>>;
}

/** One path item per URL template; every URL of every route is listed (SPEC §12). */
export function projectPaths(routes: readonly MountedRoute[], options: ProjectPathOptions): ProjectPaths {
  const paths: Record<string, Record<string, Json>> = {};
  const templateByShape = new Map<string, string>();
  const components = new SchemaComponents();
  for (const route of routes) {
    const declared = declareSchemas(route, components);
    for (const url of route.urls) {
      const template = openApiTemplate(url);
      // OpenAPI treats /a/{id} and /a/{key} as one path: the first spelling names the parameter.
      const shape = template.replace(TEMPLATE_PARAMETER, '{}');
      const key = templateByShape.get(shape) ?? template;
      templateByShape.set(shape, key);
      paths[key] ??= { parameters: pathParameters(key) };
      paths[key][route.method.toLowerCase()] = projectOperation(route, declared, parameterRenaming(template, key), options);
    }
  }
  return { paths, schemas: components.schemas };
}

/** `/api/sample/items/:id` → `/api/sample/items/{id}`; optional groups are flattened. */
export function openApiTemplate(url: string): string {
  return url.replace(/[{}]/g, '').replace(ROUTE_PARAMETER, '{$1}');
}

function pathParameters(template: string): Json[] {
  const parameters: Json[] = [ref('parameters', 'Tenant')];
  for (const name of parameterNames(template)) parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  return parameters;
}

function parameterNames(template: string): string[] {
  return [...new Set([...template.matchAll(TEMPLATE_PARAMETER)].map((match) => match[1]))];
}

/** A route's parameter name → the name the shared path item spells it with, by position. */
function parameterRenaming(template: string, key: string): (name: string) => string {
  const own = parameterNames(template);
  const shared = parameterNames(key);
  return (name) => shared[own.indexOf(name)] ?? name;
}

function declareSchemas(route: MountedRoute, components: SchemaComponents): DeclaredSchemas {
  const schemas = route.schemas;
  if (schemas === undefined) return { responses: {} };
  const place = (part: string, schema: JsonObject | undefined) => (schema === undefined ? undefined : components.add([route.project, route.method, ...route.path.split(/[^A-Za-z0-9]+/), part], schema));
  const responses = Object.fromEntries(Object.entries(schemas.responses).map(([status, schema]) => [status, place(`response${status}`, schema)]));
  return { params: place('params', schemas.params), query: place('query', schemas.query), body: place('body', schemas.body), responses };
}

function projectOperation(route: MountedRoute, declared: DeclaredSchemas, rename: (name: string) => string, options: ProjectPathOptions): JsonObject {
  const hasBody = route.method === 'POST' || route.method === 'PUT';
  const parameters = declaredParameters(declared, rename);
  const requestBody = declared.body === undefined ? (hasBody ? { required: false, content: ANY_BODY } : undefined) : declaredRequestBody(declared.body);
  return {
    tags: route.tags !== undefined && route.tags.length > 0 ? route.tags : [route.project],
    summary: route.summary ?? `${route.method} ${route.path} of project ${route.project}`,
    description: [route.description, AUTHENTICATION_NOTE[route.auth]].filter(Boolean).join('\n\n'),
    'x-spaceport-auth': route.auth,
    ...AUTHENTICATION[route.auth],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody === undefined ? {} : { requestBody }),
    responses: {
      ...errorResponses(...chainStatuses(route.auth, options)),
      ...declaredResponses(declared, route.auth === 'public' ? rateLimitHeaders : undefined),
    },
  };
}

/** The answers the chain itself can give before or around the handler (SPEC §7, §8.3). */
function chainStatuses(auth: AuthMode, options: ProjectPathOptions): number[] {
  const statuses = [400];
  if (auth !== 'public') statuses.push(401);
  if (options.refererValidation) statuses.push(403);
  statuses.push(413);
  if (auth === 'public') statuses.push(429);
  statuses.push(500, 503, 504);
  return statuses;
}

const AUTHENTICATION: Readonly<Record<AuthMode, JsonObject>> = {
  system: { security: [{ [BEARER_SCHEME]: [] }] },
  public: { security: [] },
  custom: {},
};

const AUTHENTICATION_NOTE: Readonly<Record<AuthMode, string>> = {
  system: 'Needs a system JWT.',
  public: 'Public; rate-limited per client address and tenant.',
  custom: "Custom authentication: the project's own `auth` function decides (no standard scheme).",
};
