import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Runtime } from '../core/runtime.ts';
import { MemoryWindows, type Spent } from './window.ts';

export interface LimiterOptions {
  name: string;
  windowMs: number;
  max: number;
}

/** Counts a request against its key's budget: at once in memory, through Redis when shared. */
export type Limiter = (key: string) => Spent | Promise<Spent>;

const KEY_PREFIX = 'spaceport:ratelimit';
const REDIS_TIMEOUT_MS = 1000;

/** Per runtime: one Redis client, and one limiter per name and shape (same name, same budget). */
const clients = new WeakMap<Runtime, Redis>();
const limiters = new WeakMap<Runtime, Map<string, Limiter>>();

/**
 * The counter store for a limit: in memory, or in Redis when REDIS_URL is set so that several
 * instances share one budget. Should Redis fail, the same limit is kept in memory meanwhile.
 */
export function limiterFor(runtime: Runtime, options: LimiterOptions): Limiter {
  let byName = limiters.get(runtime);
  if (byName === undefined) {
    byName = new Map();
    limiters.set(runtime, byName);
  }
  const id = `${options.name}:${options.windowMs}:${options.max}`;
  let limiter = byName.get(id);
  if (limiter === undefined) {
    limiter = createLimiter(runtime, options);
    byName.set(id, limiter);
  }
  return limiter;
}

function createLimiter(runtime: Runtime, options: LimiterOptions): Limiter {
  const redisUrl = runtime.secrets.redisUrl;
  if (redisUrl === undefined) {
    const windows = new MemoryWindows(options.windowMs);
    return (key) => windows.consume(key);
  }
  return sharedLimiter(redisClient(runtime, redisUrl), options);
}

/** rate-limiter-flexible over Redis; its own memory store stands in while Redis does not answer. */
function sharedLimiter(client: Redis, { name, windowMs, max }: LimiterOptions): Limiter {
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
