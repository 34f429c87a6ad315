import createError from 'http-errors';
import type { Context, Middleware, Next } from 'koa';
import { requestState } from '../core/request-state.ts';
import type { Runtime } from '../core/runtime.ts';
import type { RateLimitBudget, Spent } from './budget.ts';
import { clientGroup } from './client-address.ts';

export interface RateLimitOptions extends RateLimitBudget {
  /** Whom the budget counts: the client's IP (the default), or the caller's verified uid (its IP without one). */
  readonly by?: 'ip' | 'user';
  /** Counts apart from other limits of the same name and budget (a route's own limit, `route` in the metrics whatever its route). */
  readonly scope?: string;
}
export { RateLimitCounters, redisTarget } from './counters.ts';

/** Per client (`clientGroup`, or the caller) and tenant (SPEC §8.6, §17.5): `RateLimit-*` headers, 429 past the limit; in memory, no promise. */
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

function clientKey({ by = 'ip', scope }: RateLimitOptions, groupOf: (address: string) => string): (ctx: Context) => string {
  const prefix = scope === undefined ? '' : `${scope}|`;
  if (by === 'ip') return (ctx) => `${prefix}${requestState(ctx).tenant ?? ''}|${groupOf(ctx.ip)}`;
  return (ctx) => {
    const state = requestState(ctx);
    const uid = state.caller?.uid;
    return `${prefix}${state.tenant ?? ''}|${uid === undefined ? `ip:${groupOf(ctx.ip)}` : `uid:${uid}`}`;
  };
}
