import type { Secrets } from '../config/index.ts';
import { messageOf } from '../core/errors.ts';
import type { Logger } from '../logger/index.ts';
import { entryOf } from '../values/map-entry.ts';
import type { RateCounter, RateCounters, RateLimitBudget } from './budget.ts';
import type { RedisTarget, SharedCounts } from './shared.ts';
import { MemoryWindows } from './window.ts';

/** One counter per name and budget: in Redis when set, so instances share one budget; in memory meanwhile, should Redis fail. */
export class RateLimitCounters implements RateCounters {
  readonly #redis: RedisTarget | undefined;
  readonly #logger: Logger;
  readonly #counters = new Map<string, RateCounter>();
  #shared: Promise<SharedCounts> | undefined;

  constructor(redis: string | RedisTarget | undefined, logger: Logger) {
    this.#redis = typeof redis === 'string' ? { url: redis } : redis;
    this.#logger = logger;
  }

  counterFor(budget: RateLimitBudget): RateCounter {
    return entryOf(this.#counters, `${budget.name}:${budget.windowMs}:${budget.max}`, () => this.#create(budget));
  }

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

  /** Imported only where Redis is configured: ioredis is some 80 modules every start-up would read. */
  #sharedCounts(redis: RedisTarget): Promise<SharedCounts> {
    this.#shared ??= import('./shared.ts').then((module) => module.sharedCounts(redis, this.#logger));
    return this.#shared;
  }
}

function memoryCounter(budget: RateLimitBudget): RateCounter {
  const windows = new MemoryWindows(budget.windowMs);
  return (key) => windows.consume(key);
}

export function redisTarget({ redisUrl, redisClusterNodes }: Pick<Secrets, 'redisUrl' | 'redisClusterNodes'>): RedisTarget | undefined {
  if (redisClusterNodes !== undefined) return { clusterNodes: redisClusterNodes };
  return redisUrl === undefined ? undefined : { url: redisUrl };
}
