import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Runtime } from '../runtime.ts';

export interface LimiterOptions {
  name: string;
  windowMs: number;
  max: number;
}

const KEY_PREFIX = 'spaceport:ratelimit';
const REDIS_TIMEOUT_MS = 1000;

/** Per runtime: one Redis client, and one limiter per name and shape (same name, same budget). */
const clients = new WeakMap<Runtime, Redis>();
const limiters = new WeakMap<Runtime, Map<string, RateLimiterAbstract>>();

/**
 * The counter store for a limit: in memory, or in Redis when REDIS_URL is set so that several
 * instances share one budget. Should Redis fail, the same limit is kept in memory meanwhile.
 */
export function limiterFor(runtime: Runtime, options: LimiterOptions): RateLimiterAbstract {
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

function createLimiter(runtime: Runtime, { name, windowMs, max }: LimiterOptions): RateLimiterAbstract {
  const keyPrefix = `${KEY_PREFIX}:${name}`;
  const memory = new RateLimiterMemory({ keyPrefix, points: max, duration: windowMs / 1000 });
  const redisUrl = runtime.secrets.redisUrl;
  if (redisUrl === undefined) return memory;
  return new RateLimiterRedis({
    storeClient: redisClient(runtime, redisUrl),
    keyPrefix,
    points: max,
    // Redis keeps whole seconds: a shorter window would never expire.
    duration: Math.max(1, Math.ceil(windowMs / 1000)),
    insuranceLimiter: memory,
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
