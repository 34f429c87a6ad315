import createError from 'http-errors';
import type { Context, Middleware, Next } from 'koa';
import { requestState } from '../core/request-state.ts';
import type { Runtime } from '../core/runtime.ts';
import type { RateLimitBudget, Spent } from './budget.ts';
import { clientGroup } from './client-address.ts';

export interface RateLimitOptions extends RateLimitBudget {
  /** Whom the budget counts: the client's IP (the default), or the caller's verified uid (its IP without one). */
  readonly by?: 'ip' | 'user';
  /**
   * Counts apart from the other limits of the same name and budget (a route's own limit, named
   * `route` in the metrics whatever its route): its counts are kept under their own keys.
   */
  readonly scope?: string;
}
export { RateLimitCounters, redisTarget } from './counters.ts';

/**
 * Limits requests per client (its IPv4 address or IPv6 network, see `clientGroup`; or the
 * caller) and tenant (SPEC §8.6, §17.5): every answer carries `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset` (seconds until the window resets); past the limit
 * the answer is 429 `{error}` with `Retry-After`. Every request that reaches it counts. In memory
 * it answers without a promise.
 */
export function rateLimit(runtime: Runtime, options: RateLimitOptions): Middleware {
  const counter = runtime.rateCounters.counterFor(options);
  const max = String(options.max);
  const { metrics } = runtime;
  const admit = (ctx: Context, spent: Spent, next: Next) => {
    const reset = String(Math.max(1, Math.ceil(spent.msBeforeReset / 1000)));
    const headers = { 'RateLimit-Limit': max, 'RateLimit-Remaining': String(Math.max(0, options.max - spent.consumed)), 'RateLimit-Reset': reset };
    ctx.set(headers);
    if (spent.consumed > options.max) {
      metrics?.rateLimitRejected(options.name);
      throw createError(429, 'too many requests', { headers: { ...headers, 'Retry-After': reset } });
    }
    return next();
  };
  const keyOf = clientKey(options, clientGroup(runtime.config.rateLimit.ipv6Prefix));
  return (ctx, next) => {
    const spent = counter(keyOf(ctx));
    return spent instanceof Promise ? spent.then((counted) => admit(ctx, counted, next)) : admit(ctx, spent, next);
  };
}

/** The key a request is counted under: its scope, its tenant and its client (its address's group, or its uid). */
function clientKey({ by = 'ip', scope }: RateLimitOptions, groupOf: (address: string) => string): (ctx: Context) => string {
  const prefix = scope === undefined ? '' : `${scope}|`;
  if (by === 'ip') return (ctx) => `${prefix}${requestState(ctx).tenant ?? ''}|${groupOf(ctx.ip)}`;
  return (ctx) => {
    const state = requestState(ctx);
    const uid = state.caller?.uid;
    return `${prefix}${state.tenant ?? ''}|${uid === undefined ? `ip:${groupOf(ctx.ip)}` : `uid:${uid}`}`;
  };
}
