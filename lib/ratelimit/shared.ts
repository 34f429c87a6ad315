import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Runtime } from '../core/runtime.ts';
import type { LimiterOptions, Limiter } from './store.ts';
import type { Spent } from './window.ts';

const KEY_PREFIX = 'spaceport:ratelimit';
const REDIS_TIMEOUT_MS = 1000;

/** Per runtime: one Redis client for all its shared limits. */
const clients = new WeakMap<Runtime, Redis>();

/** rate-limiter-flexible over Redis; its own memory store stands in while Redis does not answer. */
export function sharedLimiter(runtime: Runtime, redisUrl: string, { name, windowMs, max }: LimiterOptions): Limiter {
  const client = redisClient(runtime, redisUrl);
  const keyPrefix = `${KEY_PREFIX}:${name}`;
  const limiter = new RateLimiterRedis({
    storeClient: client,
    keyPrefix,
    points: max,
    // Redis keeps whole seconds: a shorter window would never expire.
    duration: Math.max(1, Math.ceil(windowMs / 1000)),
    insuranceLimiter: new RateLimiterMemory({ keyPrefix, points: max, duration: windowMs / 1000 }),
  });
  const spent = (outcome: RateLimiterRes): Spent => ({ consumed: outcome.consumedPoints, msBeforeReset: outcome.msBeforeNext });
  return (key) =>
    limiter.consume(key).then(spent, (refusal: unknown) => {
      // Past the budget, rate-limiter-flexible rejects with the count; anything else is a failure.
      if (refusal instanceof RateLimiterRes) return spent(refusal);
      throw refusal;
    });
}

function redisClient(runtime: Runtime, url: string): Redis {
  let client = clients.get(runtime);
  if (client !== undefined) return client;
  client = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: REDIS_TIMEOUT_MS, commandTimeout: REDIS_TIMEOUT_MS });
  client.on('error', (error: Error) => runtime.logger.warn({ error: error.message }, 'redis: rate limits kept in memory until it answers'));
  clients.set(runtime, client);
  const opened = client;
  runtime.shutdownTasks.push(async () => {
    await opened.quit().catch(() => opened.disconnect());
  });
  return client;
}
