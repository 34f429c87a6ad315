import compose from 'koa-compose';
import type { Middleware } from 'koa';
import { bodyParsers, bridgeHandler } from '../bridge/index.ts';
import { systemAuthentication } from '../auth/system-auth.ts';
import { rateLimit } from '../ratelimit/index.ts';
import type { Runtime } from '../core/runtime.ts';
import type { RouteDefinition, RouteFunction } from './definition.ts';
import { refererValidation } from './referer.ts';
import { schemaCheckStep } from './request-validation.ts';

/** The steps every route shares, built once per service. */
export interface ChainSteps {
  readonly referer: Middleware | undefined;
  readonly publicRateLimit: () => Middleware;
  readonly systemAuthentication: Middleware;
  readonly parseFields: Middleware;
  readonly parseMultipart: Middleware;
  readonly bridge: (handler: RouteFunction) => Middleware;
}

export function chainSteps(runtime: Runtime): ChainSteps {
  const { config, logger } = runtime;
  const bodies = bodyParsers(config.limits);
  let publicLimit: Middleware | undefined;
  return {
    referer: config.referer.enabled ? refererValidation(config.referer) : undefined,
    // One budget per client and tenant across every public route, created only if one exists.
    publicRateLimit: () => (publicLimit ??= rateLimit(runtime, { name: 'public', ...config.rateLimit.public })),
    systemAuthentication: systemAuthentication(runtime),
    parseFields: bodies.fields,
    parseMultipart: bodies.multipart,
    bridge: (handler) => bridgeHandler(handler, { handlerMs: config.limits.handlerMs, logger }),
  };
}

/**
 * One route's chain after the tenant step (SPEC §8.3), composed once at start-up: referer →
 * rate limit (public) → custom auth, with the non-file bodies parsed just before it → system
 * authentication unless public or custom → the declared params and query schemas → body
 * parsing → the declared body schema → handler. No body is read before authentication, except
 * what custom auth needs; files reach the disk only after it.
 */
export function routeChain(route: RouteDefinition, steps: ChainSteps): Middleware {
  const chain: Middleware[] = [];
  if (steps.referer !== undefined) chain.push(steps.referer);
  if (route.skipAuth) chain.push(steps.publicRateLimit());
  if (route.auth !== undefined) chain.push(steps.parseFields, steps.bridge(route.auth));
  else if (!route.skipAuth) chain.push(steps.systemAuthentication);
  chain.push(...schemaCheckStep(route.schema, ['params', 'query']));
  if (route.auth === undefined) chain.push(steps.parseFields);
  chain.push(steps.parseMultipart, ...schemaCheckStep(route.schema, ['body']), steps.bridge(route.handler));
  return compose(chain);
}
