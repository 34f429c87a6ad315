import type { AreaTraits, RateLimitKey, RouteDeclaration } from './declaration.ts';
import type { SchemaDocuments } from './schemas.ts';
import { stepName } from './step-names.ts';

/** One route as `make routes` lists it and `/openapi.json` documents it: its declaration, seen from outside. */
export interface ListedRoute extends Pick<RouteDeclaration<unknown>, 'method' | 'path' | 'auth' | 'summary' | 'description' | 'tags' | 'operationId' | 'security' | 'answerHeaders' | 'answer'> {
  readonly kind: AreaTraits['kind'];
  /** The project whose route it is; none for the service's own routes. */
  readonly project?: string;
  /** The file declaring it (a project's route file). */
  readonly file?: string;
  /** Every URL it answers at: `/api/<project><path>`, plus `/api/project<path>` for the default project. */
  readonly urls: readonly string[];
  /** Rate-limited (its answers carry the `RateLimit-*` headers). */
  readonly rateLimited: boolean;
  /** The route's own budget, when it declares one (by user on a route without system authentication counts by IP). */
  readonly ownRateLimit?: { readonly max: number; readonly windowMs: number; readonly by: RateLimitKey };
  /** The names of the route's middleware, in order (`stepName`: `anonymous` for a function without one). */
  readonly middleware: readonly string[];
  /** Takes the `tenant` header. */
  readonly tenant: boolean;
  readonly schemas?: SchemaDocuments;
  /** Every error status its chain and handler may answer, in order. */
  readonly errors: readonly number[];
}

/** Where an area's routes are mounted: each route answers at every mount followed by its path. */
export interface AreaPlace {
  readonly mounts: readonly string[];
  readonly project?: string;
  readonly file?: string;
}

/** The listing of one area's routes, in declaration order. */
export function listRoutes<Handler>(routes: readonly RouteDeclaration<Handler>[], traits: AreaTraits, place: AreaPlace): readonly ListedRoute[] {
  return Object.freeze(
    routes.map((route) =>
      Object.freeze({
        kind: traits.kind,
        project: place.project,
        file: place.file,
        method: route.method,
        path: route.path,
        urls: Object.freeze(place.mounts.map((mount) => `${mount}${route.path}`)),
        auth: route.auth,
        rateLimited: route.rateLimit !== undefined,
        ownRateLimit: ownRateLimitOf(route),
        middleware: Object.freeze((route.middleware ?? []).map(stepName)),
        tenant: traits.tenant,
        summary: route.summary,
        description: route.description,
        tags: route.tags,
        operationId: route.operationId,
        security: route.security,
        schemas: route.schema?.documents,
        errors: Object.freeze(errorStatuses(route, traits)),
        answerHeaders: route.answerHeaders,
        answer: route.answer,
      }),
    ),
  );
}

function ownRateLimitOf<Handler>({ rateLimit }: RouteDeclaration<Handler>): ListedRoute['ownRateLimit'] {
  return rateLimit?.name === 'route' ? Object.freeze({ max: rateLimit.max, windowMs: rateLimit.windowMs, by: rateLimit.by }) : undefined;
}

/** A route's own budget in a few words: `10/60s by user`. */
export function describeRateLimit({ max, windowMs, by }: NonNullable<ListedRoute['ownRateLimit']>): string {
  const window = windowMs % 1000 === 0 ? `${windowMs / 1000}s` : `${windowMs}ms`;
  return `${max}/${window} by ${by}`;
}

/** The error answers each step of the route's chain can give, and those it declares for itself. */
function errorStatuses<Handler>(route: RouteDeclaration<Handler>, traits: AreaTraits): number[] {
  // The entry answers 400 to an HTTP/1.1 request without a Host header, whatever its path.
  const statuses = new Set<number>(route.errors).add(400);
  const checks = route.schema?.checks ?? {};
  const readsBody = traits.everyRouteReadsBody || checks.body !== undefined;
  if (traits.tenant) statuses.add(400).add(503);
  if (traits.switchable) statuses.add(404);
  if (traits.referer) statuses.add(403);
  if (route.rateLimit !== undefined) statuses.add(429);
  if (route.auth !== 'public') statuses.add(401);
  if (Object.keys(checks).length > 0) statuses.add(400);
  if (readsBody) statuses.add(400).add(413);
  for (const status of traits.handlerErrors) statuses.add(status);
  return [...statuses].sort((first, second) => first - second);
}
