import compose from 'koa-compose';
import type { Middleware } from 'koa';
import type { Runtime } from '../core/runtime.ts';
import { rateLimit } from '../ratelimit/index.ts';
import { type AreaTraits, countsByUser, type RouteDeclaration, type RouteRateLimit } from './declaration.ts';
import { bodyCheckStep, urlCheckStep, type ReadPart } from './request-validation.ts';

/** What tells one area's chains from another's: the steps differ, the order never does. */
export interface ChainSettings<Handler> {
  readonly traits: AreaTraits;
  /** Runs first on every route of the area (projects: referer validation, when enabled). */
  readonly referer: Middleware | undefined;
  readonly rateLimit: (limit: RouteRateLimit) => Middleware;
  readonly systemAuthentication: Middleware;
  /** Reads a body that holds no files: before a custom `authenticate` (which may need it), else after the guards. */
  readonly readFields: Middleware;
  /** `readFields` keeping the exact bytes of the body as well, for a route declaring `rawBody`. */
  readonly readFieldsWithBytes: Middleware | undefined;
  /** Reads files (multipart), after authentication only. */
  readonly readFiles: Middleware | undefined;
  /** What the schema steps check for each part, and the files received: what the handler will read. */
  readonly readPart: ReadPart;
  /** How the area runs a handler, a guard or a custom `authenticate`. */
  readonly invoke: (handler: Handler) => Middleware;
}

/**
 * One route's chain after the tenant step, composed once: referer → rate limit by IP →
 * authentication (custom, with the non-file body read just before, or system) → guards →
 * params and query schemas → body → body schema → middleware → handler. No body is read before
 * authentication and guards but what a custom `authenticate` needs; files reach disk only after.
 */
export function routeChain<Handler>(route: RouteDeclaration<Handler>, settings: ChainSettings<Handler>): Middleware {
  const chain: Middleware[] = [];
  const readsBody = settings.traits.everyRouteReadsBody || route.schema?.checks.body !== undefined;
  const readFields = route.rawBody === true && settings.readFieldsWithBytes !== undefined ? settings.readFieldsWithBytes : settings.readFields;
  if (settings.referer !== undefined) chain.push(settings.referer);
  const limit = route.rateLimit === undefined ? undefined : settings.rateLimit(route.rateLimit);
  const byUser = countsByUser(route);
  if (limit !== undefined && !byUser) chain.push(limit);
  if (route.authenticate !== undefined) chain.push(readFields, settings.invoke(route.authenticate));
  else if (route.auth === 'system') chain.push(settings.systemAuthentication);
  if (limit !== undefined && byUser) chain.push(limit);
  for (const guard of route.guards ?? []) chain.push(settings.invoke(guard));
  chain.push(...urlCheckStep(route.schema, settings.readPart));
  if (readsBody && route.authenticate === undefined) chain.push(readFields);
  if (readsBody && settings.readFiles !== undefined) chain.push(settings.readFiles);
  chain.push(...bodyCheckStep(route.schema, settings.readPart));
  for (const step of route.middleware ?? []) chain.push(settings.invoke(step));
  chain.push(settings.invoke(route.handler));
  return compose(chain);
}

/** A configured limit is made on first use and shared by the area's routes naming it. */
export function routeRateLimits(runtime: Runtime): (limit: RouteRateLimit) => Middleware {
  const named = new Map<string, Middleware>();
  return (limit) => {
    if (limit.name === 'route') return rateLimit(runtime, limit);
    let shared = named.get(limit.name);
    if (shared === undefined) {
      shared = rateLimit(runtime, { name: limit.name, by: 'ip', ...runtime.config.rateLimit[limit.name] });
      named.set(limit.name, shared);
    }
    return shared;
  };
}
