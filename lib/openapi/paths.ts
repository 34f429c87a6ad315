import { takesBody } from '../routes/methods.ts';
import type { ListedRoute } from '../routes/route-table.ts';
import { errorResponses, rateLimitHeaders, ref, type Json, type JsonObject } from './components.ts';
import { OperationIds } from './operation-ids.ts';
import { declaredParameters, declaredRequestBody, declaredResponses, type DeclaredSchemas } from './route-schemas.ts';
import { SchemaComponents } from './schema-components.ts';
import { SecuritySchemes } from './security-schemes.ts';
import { operationTags } from './tags.ts';

/** The name after `:` (or a `*rest` wildcard's) in a route path; OpenAPI writes them `{id}`. */
const PARAMETER_NAME = /^[A-Za-z_$][\w$]*/;
const TEMPLATE_PARAMETER = /\{([^}]+)\}/g;

const ANY_BODY: JsonObject = {
  'application/json': {},
  'application/x-www-form-urlencoded': {},
  'multipart/form-data': {},
  'text/plain': {},
};

export interface RoutePaths {
  readonly paths: Record<string, Record<string, Json>>;
  /** The schemas routes declare, for `components.schemas`. */
  readonly schemas: Readonly<Record<string, JsonObject>>;
  /** The security schemes the operations take, for `components.securitySchemes`. */
  readonly securitySchemes: Readonly<Record<string, JsonObject>>;
}

/** What naming one operation shares with the others: component and operation names are unique in the document. */
interface Naming {
  readonly schemas: SchemaComponents;
  readonly security: SecuritySchemes;
  readonly operationIds: OperationIds;
}

/** One path item per URL template; every URL of every route is listed (SPEC §12). */
export function routePaths(routes: readonly ListedRoute[]): RoutePaths {
  const paths: Record<string, Record<string, Json>> = {};
  const templateByShape = new Map<string, string>();
  const naming: Naming = { schemas: new SchemaComponents(), security: new SecuritySchemes(), operationIds: new OperationIds() };
  for (const route of routes) {
    const declared = declareSchemas(route, naming.schemas);
    // Each URL's paths in the same order: an operation is named against the same path of the first URL.
    const firstPaths = withOptionalGroups(route.urls[0] ?? '');
    for (const url of route.urls) {
      withOptionalGroups(url).forEach((path, index) => {
        const template = openApiTemplate(path);
        // OpenAPI treats /a/{id} and /a/{key} as one path: the first spelling names the parameter.
        const shape = template.replace(TEMPLATE_PARAMETER, '{}');
        const key = templateByShape.get(shape) ?? template;
        templateByShape.set(shape, key);
        paths[key] ??= pathItem(key, route.tenant);
        const method = route.method.toLowerCase();
        // The router answers with the first route that matches: a later one is never reached there.
        if (paths[key][method] !== undefined) return;
        const operationId = naming.operationIds.name(route, template, openApiTemplate(firstPaths[index] ?? path));
        paths[key][method] = operation(route, declared, parameterRenaming(template, key), naming, operationId);
      });
    }
  }
  return { paths, schemas: naming.schemas.schemas, securitySchemes: naming.security.schemes };
}

/**
 * `/api/sample/items/:id` → `/api/sample/items/{id}`, for a path without optional groups. An
 * escaped character is literal; a literal brace is percent-encoded, as a template cannot hold it.
 */
export function openApiTemplate(path: string): string {
  let template = '';
  for (let index = 0; index < path.length; index += 1) {
    const char = path[index];
    const parameter = char === ':' || char === '*' ? PARAMETER_NAME.exec(path.slice(index + 1)) : null;
    if (char === '\\') {
      index += 1;
      template += (path[index] ?? '').replace(/[{}]/, encodeURIComponent);
    } else if (parameter !== null) {
      template += `{${parameter[0]}}`;
      index += parameter[0].length;
    } else if (char !== '{' && char !== '}') {
      template += char;
    }
  }
  return template;
}

/**
 * Every path a URL with optional groups matches, each group taken then left out: OpenAPI has no
 * optional path parameter, so `/echo/:a{/:b}` is listed as `/echo/{a}/{b}` and `/echo/{a}`.
 */
function withOptionalGroups(url: string): string[] {
  const open = nextBrace(url, 0);
  if (open === url.length) return [url];
  const close = closingBrace(url, open);
  const [before, inside, after] = [url.slice(0, open), url.slice(open + 1, close), url.slice(close + 1)];
  const paths = [...withOptionalGroups(before + inside + after), ...withOptionalGroups(before + after)];
  return [...new Set(paths.map((path) => path || '/'))];
}

function closingBrace(url: string, open: number): number {
  let depth = 0;
  for (let index = open; index < url.length; index = nextBrace(url, index + 1)) {
    if (url[index] === '{') depth += 1;
    else if (--depth === 0) return index;
  }
  return url.length;
}

/** The index of the first brace from `start` that is not escaped (`\\{`), or the URL's length. */
function nextBrace(url: string, start: number): number {
  for (let index = start; index < url.length; index += 1) {
    if (url[index] === '\\') index += 1;
    else if (url[index] === '{' || url[index] === '}') return index;
  }
  return url.length;
}

/** A path item with the parameters all its operations share: the tenant header, if taken, and the path's own. */
function pathItem(template: string, tenant: boolean): Record<string, Json> {
  const parameters: Json[] = tenant ? [ref('parameters', 'Tenant')] : [];
  for (const name of parameterNames(template)) parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  return parameters.length === 0 ? {} : { parameters };
}

function parameterNames(template: string): string[] {
  return [...new Set([...template.matchAll(TEMPLATE_PARAMETER)].map((match) => match[1]))];
}

/** A route's parameter name → the name the shared path item spells it with, by position; undefined when this path lacks it. */
function parameterRenaming(template: string, key: string): (name: string) => string | undefined {
  const own = parameterNames(template);
  const shared = parameterNames(key);
  return (name) => shared[own.indexOf(name)];
}

function declareSchemas(route: ListedRoute, components: SchemaComponents): DeclaredSchemas {
  const schemas = route.schemas;
  if (schemas === undefined) return { responses: {} };
  const place = (part: string, schema: JsonObject | undefined) => (schema === undefined ? undefined : components.add(componentName(route, part, schema), schema));
  const responses = Object.fromEntries(Object.entries(schemas.responses).map(([status, schema]) => [status, place(`response${status}`, schema)]));
  return { params: place('params', schemas.params), query: place('query', schemas.query), body: place('body', schemas.body), responses };
}

/** A schema's own `title` names its component; otherwise the project, method, path and part do. */
function componentName(route: ListedRoute, part: string, schema: JsonObject): string[] {
  if (typeof schema.title === 'string') return [schema.title];
  return [...(route.project === undefined ? [] : [route.project]), route.method, ...route.path.split(/[^A-Za-z0-9]+/), part];
}

function operation(route: ListedRoute, declared: DeclaredSchemas, rename: (name: string) => string | undefined, naming: Naming, operationId: string): JsonObject {
  const parameters = declaredParameters(declared, rename);
  const requestBody = declared.body === undefined ? (takesBody(route.method) ? { required: false, content: ANY_BODY } : undefined) : declaredRequestBody(declared.body);
  const description = [route.description, authenticationNote(route), rateLimitNote(route)].filter(Boolean).join('\n\n');
  const security = securityOf(route, naming.security);
  return {
    operationId,
    tags: operationTags(route),
    summary: route.summary ?? `${route.method} ${route.path} of project ${route.project}`,
    ...(description === '' ? {} : { description }),
    'x-spaceport-auth': route.auth,
    ...(route.ownRateLimit === undefined ? {} : { 'x-spaceport-rate-limit': { ...route.ownRateLimit } }),
    ...(security === undefined ? {} : { security }),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody === undefined ? {} : { requestBody }),
    responses: {
      ...errorResponses(...route.errors),
      ...declaredResponses(declared, route.rateLimited ? rateLimitHeaders : undefined, route.answerHeaders, route.answer),
    },
  };
}

/**
 * The credentials a route takes. A custom authentication declaring nothing has no `security`:
 * its description says the document does not know what it reads, rather than claim it needs nothing.
 */
function securityOf(route: ListedRoute, schemes: SecuritySchemes): Json[] | undefined {
  switch (route.auth) {
    case 'system':
      return [schemes.systemJwt()];
    case 'public':
      return [];
    default:
      return route.security === undefined ? undefined : schemes.requirements(route.security, route.project ?? firstSegment(route.path));
  }
}

function firstSegment(path: string): string {
  return path.split('/').find(Boolean) ?? 'root';
}

function authenticationNote(route: ListedRoute): string | undefined {
  switch (route.auth) {
    case 'system':
      return 'Needs a system JWT.';
    case 'custom':
      return route.security === undefined
        ? "Custom authentication: the route's own `auth` function decides; the route declares no `security`, so this document cannot say which credential it reads."
        : "Custom authentication: the route's own `auth` function checks the credential listed under security.";
    default:
      return route.rateLimited && route.ownRateLimit === undefined ? 'Public; rate-limited per client address and tenant.' : undefined;
  }
}

function rateLimitNote({ ownRateLimit, auth }: ListedRoute): string | undefined {
  if (ownRateLimit === undefined) return undefined;
  const whom = ownRateLimit.by === 'user' && auth === 'system' ? 'caller (JWT uid)' : 'client address';
  return `Rate-limited: ${ownRateLimit.max} requests per ${ownRateLimit.windowMs / 1000} s per ${whom} and tenant (its own budget).`;
}
