import createError from 'http-errors';
import type { Context, Middleware, Next } from 'koa';
import { requestState } from '../core/request-state.ts';
import type { RateLimitBudget, Runtime, Spent } from '../core/runtime.ts';

export type RateLimitOptions = RateLimitBudget;
export { RateLimitCounters } from './counters.ts';

/**
 * Limits requests per client IP and tenant (SPEC §8.6): every answer carries `RateLimit-Limit`,
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
  return (ctx, next) => {
    const spent = counter(`${requestState(ctx).tenant ?? ''}|${ctx.ip}`);
    return spent instanceof Promise ? spent.then((counted) => admit(ctx, counted, next)) : admit(ctx, spent, next);
  };
}
