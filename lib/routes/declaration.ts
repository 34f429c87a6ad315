import type { JsonObject } from '../values/json.ts';
import type { HttpMethod } from './methods.ts';
import type { CompiledRouteSchema } from './schemas.ts';

/** `system`: a system JWT of the request's tenant; `public`: nothing (rate-limited); `custom`: its `authenticate`. */
export type AuthMode = 'system' | 'public' | 'custom';

/**
 * One route of any area, composed by `routeChain`, routed by `Router`, listed by `make routes`
 * and documented in `/openapi.json`. `Handler` is what the area's chain runs: a Koa middleware
 * factory for the service's own routes, an Express-style function for project routes.
 */
export interface RouteDeclaration<Handler> {
  readonly method: HttpMethod;
  /** Relative to the area's mount (`/items/:id` under `/api/<project>`), or the whole path. */
  readonly path: string;
  readonly auth: AuthMode;
  /** Runs in place of system authentication when `auth` is `custom`. */
  readonly authenticate?: Handler;
  /** Checked before the body is read: by IP before authentication, by user right after system authentication. */
  readonly rateLimit?: RouteRateLimit;
  /** Steps run after authentication and before the body is read (a role check). */
  readonly guards?: readonly Handler[];
  /** Steps run after the body is read and its schema checked, before the handler (a project route's `middleware`). */
  readonly middleware?: readonly Handler[];
  readonly handler: Handler;
  /** The body's exact bytes are kept for the handler (a project route's `req.rawBody`). */
  readonly rawBody?: boolean;
  /** The declared request and answer schemas, compiled; undefined when none is declared. */
  readonly schema: CompiledRouteSchema | undefined;
  readonly summary?: string;
  readonly description?: string;
  readonly tags?: readonly string[];
  /** What a custom `authenticate` reads, as OpenAPI security schemes (any one accepted). */
  readonly security?: readonly JsonObject[];
  /** The OpenAPI operation id (the service's own routes name theirs). */
  readonly operationId?: string;
  /** Error statuses the guards and handler answer beyond the chain's own (403 for a role, 409). */
  readonly errors?: readonly number[];
  /** OpenAPI headers of an answer, by status (`Location` of a 201). */
  readonly answerHeaders?: Readonly<Record<string, JsonObject>>;
  /** A success answer that is not JSON (the page of `/docs`), documented with its media type. */
  readonly answer?: NonJsonAnswer;
}

/** What an area's routes share beyond their declarations. */
export interface AreaTraits {
  /** The service's own routes, or one project's. */
  readonly kind: 'system' | 'project';
  /** Runs behind the tenant step (the `tenant` header; 400 for an invalid or unknown tenant). */
  readonly tenant: boolean;
  /** Referer validation runs first (403). */
  readonly referer: boolean;
  /** Every route reads a body (projects); otherwise only a route declaring a body schema does. */
  readonly everyRouteReadsBody: boolean;
  /** What the way handlers are run answers on its own (the bridge: 500, 503, 504). */
  readonly handlerErrors: readonly number[];
  /** The area answers 404 while a feature switch is off (spaces). */
  readonly switchable: boolean;
}

/** A 200 answer of another media type than JSON: `text/html`, Prometheus's text format. */
export interface NonJsonAnswer {
  readonly mediaType: string;
  readonly description: string;
}

/** The rate limits of `rateLimit` in the configuration. */
export type RateLimitName = 'public' | 'login';

/** Whom a budget counts: the client's IP, or the uid system authentication verified. */
export type RateLimitKey = 'ip' | 'user';

/**
 * A configured limit (`public`, `login`), whose budget the routes naming it share per IP and
 * tenant, or the route's own (`route`), apart from every other route's by `scope`. A budget by
 * user on a route without system authentication counts by IP.
 */
export type RouteRateLimit =
  | { readonly name: RateLimitName; readonly by: 'ip' }
  | { readonly name: 'route'; readonly by: RateLimitKey; readonly max: number; readonly windowMs: number; readonly scope: string };

/** Where the chain checks a route's limit: before authentication, or right after system authentication. */
export function countsByUser<Handler>(route: RouteDeclaration<Handler>): boolean {
  return route.rateLimit?.by === 'user' && route.auth === 'system' && route.authenticate === undefined;
}

/** The query parameters a declared `security` reads a credential from: the log line keeps their names only. */
export function credentialQueryNames(security: RouteDeclaration<unknown>['security']): ReadonlySet<string> {
  const names = (security ?? []).flatMap((scheme) => (scheme.type === 'apiKey' && scheme.in === 'query' && typeof scheme.name === 'string' ? [scheme.name] : []));
  return new Set(names);
}
