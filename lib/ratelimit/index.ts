import createError from 'http-errors';
import type { Middleware } from 'koa';
import type { RateLimiterRes } from 'rate-limiter-flexible';
import { requestState } from '../http/state.ts';
import type { Runtime } from '../runtime.ts';
import { limiterFor, type LimiterOptions } from './store.ts';

export type RateLimitOptions = LimiterOptions;

/**
 * Limits requests per client IP and tenant (SPEC §8.6): every answer carries `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset` (seconds until the window resets); past the limit
 * the answer is 429 `{error}` with `Retry-After`. Every request that reaches it counts.
 */
export function rateLimit(runtime: Runtime, options: RateLimitOptions): Middleware {
  const limiter = limiterFor(runtime, options);
  return async (ctx, next) => {
    const key = `${requestState(ctx).tenant ?? ''}|${ctx.ip}`;
    let outcome: RateLimiterRes;
    try {
      outcome = await limiter.consume(key);
    } catch (rejection) {
      if (rejection instanceof Error) throw rejection;
      const headers = limitHeaders(options.max, rejection as RateLimiterRes);
      ctx.set(headers);
      throw createError(429, 'too many requests', { headers: { ...headers, 'Retry-After': headers['RateLimit-Reset'] } });
    }
    ctx.set(limitHeaders(options.max, outcome));
    await next();
  };
}

function limitHeaders(max: number, outcome: RateLimiterRes): Record<string, string> {
  return {
    'RateLimit-Limit': String(max),
    'RateLimit-Remaining': String(Math.max(0, max - outcome.consumedPoints)),
    'RateLimit-Reset': String(Math.max(1, Math.ceil(outcome.msBeforeNext / 1000))),
  };
}
