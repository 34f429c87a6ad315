import { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { messageOf } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { RateCounter, RateLimitBudget, Spent } from '../core/runtime.ts';
import { MemoryWindows } from './window.ts';

const KEY_PREFIX = 'spaceport:ratelimit';
const REDIS_TIMEOUT_MS = 1000;
/** How long a limit stays in memory after Redis failed it, before Redis is tried again. */
const MEMORY_SPELL_MS = 5000;

/** One Redis client for all the shared limits of a service, and the way to close it. */
export interface SharedCounts {
  /** Resolves once the first connection is made, or after REDIS_TIMEOUT_MS at most. */
  counterFor(budget: RateLimitBudget): Promise<RateCounter>;
  close(): Promise<void>;
}

export function sharedCounts(url: string, logger: Logger): SharedCounts {
  const client = redisClient(url, logger);
  const connected = firstConnection(client);
  return {
    counterFor: async (budget) => {
      await connected;
      return sharedCounter(client, logger, budget);
    },
    close: async () => {
      await client.quit().catch(() => client.disconnect());
    },
  };
}

/**
 * rate-limiter-flexible over Redis. When Redis fails a count (away, silent, or refusing writes
 * as in a failover), the limit is kept in memory for MEMORY_SPELL_MS, then one request tries
 * Redis again: only the requests already waiting on Redis wait out its timeout, not every one.
 */
function sharedCounter(client: Redis, logger: Logger, { name, windowMs, max }: RateLimitBudget): RateCounter {
  const limiter = new RateLimiterRedis({
    storeClient: client,
    keyPrefix: `${KEY_PREFIX}:${name}`,
    points: max,
    // Redis keeps whole seconds: a shorter window would never expire.
    duration: Math.max(1, Math.ceil(windowMs / 1000)),
  });
  const memory = new MemoryWindows(windowMs);
  const outages = new Outages();
  const spent = (outcome: RateLimiterRes): Spent => ({ consumed: outcome.consumedPoints, msBeforeReset: outcome.msBeforeNext });
  return (key) => {
    const way = outages.way();
    if (way === 'memory') return memory.consume(key);
    return limiter.consume(key).then(
      (outcome) => {
        outages.answered(way);
        return spent(outcome);
      },
      (refusal: unknown) => {
        // Past the budget, rate-limiter-flexible rejects with the count; anything else is a failure.
        if (refusal instanceof RateLimiterRes) {
          outages.answered(way);
          return spent(refusal);
        }
        if (outages.failed(way)) {
          logger.warn({ limit: name, error: messageOf(refusal) }, `redis: the limit is kept in memory for ${MEMORY_SPELL_MS / 1000} s`);
        }
        return memory.consume(key);
      },
    );
  };
}

/**
 * Where a count goes while Redis fails: in memory for a spell of MEMORY_SPELL_MS after a failure,
 * then one request (the probe) tries Redis while the rest stay in memory, instead of all waiting
 * on a Redis that may still not answer.
 */
class Outages {
  #memoryUntil = 0;
  #probing = false;

  way(): 'redis' | 'probe' | 'memory' {
    if (this.#probing || Date.now() < this.#memoryUntil) return 'memory';
    if (this.#memoryUntil === 0) return 'redis';
    this.#probing = true;
    return 'probe';
  }

  answered(way: 'redis' | 'probe'): void {
    if (way !== 'probe') return;
    this.#probing = false;
    this.#memoryUntil = 0;
  }

  /** Records a failure; true when it begins a spell in memory (worth a log line). */
  failed(way: 'redis' | 'probe'): boolean {
    if (way === 'probe') this.#probing = false;
    const begins = Date.now() >= this.#memoryUntil;
    this.#memoryUntil = Date.now() + MEMORY_SPELL_MS;
    return begins;
  }
}

function redisClient(url: string, logger: Logger): Redis {
  // While Redis is away, a command fails at once (and is counted in memory) instead of every
  // request waiting out the timeout: no offline queue, and a connection that has not answered
  // for REDIS_TIMEOUT_MS is closed (and reopened) rather than kept waiting on. A command that
  // failed was counted in memory: it is not sent again once Redis is back.
  const client = new Redis(url, {
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 1,
    connectTimeout: REDIS_TIMEOUT_MS,
    commandTimeout: REDIS_TIMEOUT_MS,
    socketTimeout: REDIS_TIMEOUT_MS,
  });
  client.on('error', (error: Error) => logger.warn({ error: error.message }, 'redis: rate limits kept in memory until it answers'));
  return client;
}

/** The first connection's outcome: ready, refused, or still pending after REDIS_TIMEOUT_MS. */
function firstConnection(client: Redis): Promise<void> {
  return new Promise((resolve) => {
    const settle = () => {
      clearTimeout(timer);
      client.off('ready', settle).off('error', settle);
      resolve();
    };
    const timer = setTimeout(settle, REDIS_TIMEOUT_MS);
    client.once('ready', settle).once('error', settle);
  });
}
