import { messageOf } from '../core/errors.ts';
import type { Runtime } from '../core/runtime.ts';
import { MemoryWindows, type Spent } from './window.ts';

export interface LimiterOptions {
  name: string;
  windowMs: number;
  max: number;
}

/** Counts a request against its key's budget: at once in memory, through Redis when shared. */
export type Limiter = (key: string) => Spent | Promise<Spent>;

/** Per runtime: one limiter per name and shape (same name, same budget). */
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
  if (redisUrl === undefined) return memoryLimiter(options);
  // Loaded only where Redis is configured: ioredis and rate-limiter-flexible are some 80 modules
  // that every start-up would otherwise read. The import begins now, not at the first request.
  const shared = import('./shared.ts')
    .then((module) => module.sharedLimiter(runtime, redisUrl, options))
    .catch((error: unknown) => {
      // Only the message: an error about the URL may carry it whole, password included.
      runtime.logger.error({ limit: options.name, error: messageOf(error) }, 'redis: cannot be used, the limit is kept in memory');
      return memoryLimiter(options);
    });
  return async (key) => (await shared)(key);
}

function memoryLimiter(options: LimiterOptions): Limiter {
  const windows = new MemoryWindows(options.windowMs);
  return (key) => windows.consume(key);
}

