import type { RouteHandler } from '../bridge/index.ts';
import type { AuthMode, RateLimitKey, RouteDeclaration, RouteRateLimit } from '../routes/declaration.ts';
import type { HttpMethod } from '../routes/methods.ts';
import type { CompiledRouteSchema } from '../routes/schemas.ts';
import type { IndexDeclaration } from '../documents/index-keys.ts';
import type { JsonObject } from '../values/json.ts';

export { HTTP_METHODS, type HttpMethod } from '../routes/methods.ts';

/** What a route file declares for `function` and `auth`: an Express-style `(req, res, next)`. */
export type RouteFunction = RouteHandler;

/** One route of a route file, after validation, in the words of the file. */
export interface RouteDefinition {
  readonly method: HttpMethod;
  readonly path: string;
  readonly handler: RouteFunction;
  readonly skipAuth: boolean;
  readonly auth: RouteFunction | undefined;
  /** Run in order after the body is read and checked, before `handler`. */
  readonly middleware: readonly RouteFunction[];
  /** The route's own budget, per tenant; undefined: a public route shares the public budget. */
  readonly rateLimit: OwnRateLimit | undefined;
  /** The route also gets `req.rawBody`, the exact bytes of a JSON, urlencoded or text body. */
  readonly rawBody: boolean;
  readonly summary: string | undefined;
  readonly description: string | undefined;
  readonly tags: readonly string[];
  /** What `/openapi.json` names the operation, at the project's own mount. */
  readonly operationId: string | undefined;
  /** The declared request and answer schemas, compiled; undefined when none is declared. */
  readonly schema: CompiledRouteSchema | undefined;
  /** The OpenAPI security schemes a custom `auth` reads, any one of them accepted; undefined when none is declared. */
  readonly security: readonly JsonObject[] | undefined;
}

/** A route file's `rateLimit`: at most `max` requests per `windowMs` by IP or by user. */
export interface OwnRateLimit {
  readonly max: number;
  readonly windowMs: number;
  readonly by: RateLimitKey;
}

/** A project whose route file loaded and validated. */
export interface ProjectDefinition {
  readonly name: string;
  /** Absolute path of its route file. */
  readonly file: string;
  readonly routes: readonly RouteDefinition[];
  /** The indexes its `api/indexes.{js,mjs,ts}` declares (none without one). */
  readonly indexes: readonly IndexDeclaration[];
}

/** A project route in the shape every route of the service shares. */
export type ProjectRoute = RouteDeclaration<RouteFunction>;

/**
 * The route file's words in the shared shape: `skipAuth` is a public route with the public rate
 * limit unless the route declares its own; a custom `auth` wins over `skipAuth`, even `skipAuth:
 * true` (it runs, rate-limited, and system authentication is skipped).
 */
export function projectRoute(project: string, route: RouteDefinition): ProjectRoute {
  return Object.freeze({
    method: route.method,
    path: route.path,
    auth: authModeOf(route),
    authenticate: route.auth,
    rateLimit: rateLimitOf(project, route),
    handler: route.handler,
    middleware: route.middleware,
    rawBody: route.rawBody,
    schema: route.schema,
    summary: route.summary,
    description: route.description,
    tags: route.tags,
    operationId: route.operationId,
    security: route.security,
  });
}

function authModeOf(route: Pick<RouteDefinition, 'skipAuth' | 'auth'>): AuthMode {
  if (route.auth !== undefined) return 'custom';
  return route.skipAuth ? 'public' : 'system';
}

function rateLimitOf(project: string, route: RouteDefinition): RouteRateLimit | undefined {
  if (route.rateLimit !== undefined) return { name: 'route', ...route.rateLimit, scope: `${project} ${route.method} ${route.path}` };
  return route.skipAuth ? { name: 'public', by: 'ip' } : undefined;
}
