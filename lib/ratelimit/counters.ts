import type { Secrets } from '../config/index.ts';
import { messageOf } from '../core/errors.ts';
import type { Logger } from '../logger/index.ts';
import type { RateCounter, RateCounters, RateLimitBudget } from './budget.ts';
import type { RedisTarget, SharedCounts } from './shared.ts';
import { MemoryWindows } from './window.ts';

/**
 * The counters of one service's rate limits, one per name and budget: in memory, or in Redis
 * when REDIS_URL (or REDIS_CLUSTER_NODES) is set so that several instances share one budget. Should Redis fail, a limit
 * is kept in memory meanwhile. `createRuntime` makes it and registers `close` as it does.
 */
export class RateLimitCounters implements RateCounters {
  readonly #redis: RedisTarget | undefined;
  readonly #logger: Logger;
  readonly #counters = new Map<string, RateCounter>();
  #shared: Promise<SharedCounts> | undefined;

  /** `redis`: a URL (one Redis), or one Redis or a cluster's seed nodes; none keeps limits in memory. */
  constructor(redis: string | RedisTarget | undefined, logger: Logger) {
    this.#redis = typeof redis === 'string' ? { url: redis } : redis;
    this.#logger = logger;
  }

  counterFor(budget: RateLimitBudget): RateCounter {
    const id = `${budget.name}:${budget.windowMs}:${budget.max}`;
    let counter = this.#counters.get(id);
    if (counter === undefined) {
      counter = this.#create(budget);
      this.#counters.set(id, counter);
    }
    return counter;
  }

  /** Closes the Redis client, if a limit opened one. */
  async close(): Promise<void> {
    const shared = await this.#shared?.catch(() => undefined);
    await shared?.close();
  }

  #create(budget: RateLimitBudget): RateCounter {
    if (this.#redis === undefined) return memoryCounter(budget);
    const shared = this.#sharedCounts(this.#redis)
      .then((counts) => counts.counterFor(budget))
      .catch((error: unknown) => {
        // Only the message: an error about the URL may carry it whole, password included.
        this.#logger.error({ limit: budget.name, error: messageOf(error) }, 'redis: cannot be used, the limit is kept in memory');
        return memoryCounter(budget);
      });
    return async (key) => (await shared)(key);
  }

  /**
   * Loaded only where Redis is configured and a limit exists: ioredis and rate-limiter-flexible
   * are some 80 modules that every start-up (and every command) would otherwise read. The import
   * begins as the first limit is composed, at start-up, not at the first request.
   */
  #sharedCounts(redis: RedisTarget): Promise<SharedCounts> {
    this.#shared ??= import('./shared.ts').then((module) => module.sharedCounts(redis, this.#logger));
    return this.#shared;
  }
}

function memoryCounter(budget: RateLimitBudget): RateCounter {
  const windows = new MemoryWindows(budget.windowMs);
  return (key) => windows.consume(key);
}

/** Where the shared counts are kept: the cluster's seed nodes, one Redis, or nowhere (memory). */
export function redisTarget({ redisUrl, redisClusterNodes }: Pick<Secrets, 'redisUrl' | 'redisClusterNodes'>): RedisTarget | undefined {
  if (redisClusterNodes !== undefined) return { clusterNodes: redisClusterNodes };
  return redisUrl === undefined ? undefined : { url: redisUrl };
}
