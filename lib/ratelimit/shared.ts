import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { messageOf } from '../core/errors.ts';
import type { Logger } from '../logger/index.ts';
import type { RateCounter, RateLimitBudget, Spent } from './budget.ts';
import { MemoryWindows } from './window.ts';

const KEY_PREFIX = 'spaceport:ratelimit';
const REDIS_TIMEOUT_MS = 1000;
/** How long a limit stays in memory after Redis failed it, before Redis is tried again. */
const MEMORY_SPELL_MS = 5000;

export interface SharedCounts {
  /** Resolves once the first connection is made, or after REDIS_TIMEOUT_MS at most. */
  counterFor(budget: RateLimitBudget): Promise<RateCounter>;
  close(): Promise<void>;
}

/** One Redis (`REDIS_URL`) or the seed nodes of a Redis Cluster (`REDIS_CLUSTER_NODES`). */
export type RedisTarget = { readonly url: string } | { readonly clusterNodes: readonly string[] };

export function sharedCounts(target: RedisTarget, logger: Logger): SharedCounts {
  const client = 'url' in target ? redisClient(target.url, logger) : clusterClient(target.clusterNodes, logger);
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

function sharedCounter(client: Redis | Cluster, logger: Logger, { name, windowMs, max }: RateLimitBudget): RateCounter {
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
        if (outages.answered(way)) logger.info({ limit: name }, 'redis: the limit is counted in Redis again');
        return spent(outcome);
      },
      (refusal: unknown) => {
        // Past the budget, rate-limiter-flexible rejects with the count; anything else is a failure.
        if (refusal instanceof RateLimiterRes) {
          if (outages.answered(way)) logger.info({ limit: name }, 'redis: the limit is counted in Redis again');
          return spent(refusal);
        }
        if (outages.failed(way)) {
          logger.warn({ limit: name, error: messageOf(refusal) }, `redis: the limit is kept in memory, Redis tried again every ${MEMORY_SPELL_MS / 1000} s`);
        }
        return memory.consume(key);
      },
    );
  };
}

/** After a failure, counts stay in memory for a spell, then one request (the probe) tries Redis: only it waits out the timeout, not every one. */
class Outages {
  #memoryUntil = 0;
  #probing = false;

  way(): 'redis' | 'probe' | 'memory' {
    if (this.#probing || Date.now() < this.#memoryUntil) return 'memory';
    if (this.#memoryUntil === 0) return 'redis';
    this.#probing = true;
    return 'probe';
  }

  /** True when it ends an outage (worth a log line). */
  answered(way: 'redis' | 'probe'): boolean {
    if (way !== 'probe') return false;
    this.#probing = false;
    this.#memoryUntil = 0;
    return true;
  }

  /** True when it begins an outage (worth a log line): not a failed probe, which only lengthens it by a spell. */
  failed(way: 'redis' | 'probe'): boolean {
    if (way === 'probe') this.#probing = false;
    const begins = this.#memoryUntil === 0;
    this.#memoryUntil = Date.now() + MEMORY_SPELL_MS;
    return begins;
  }
}

// While Redis is away a command fails at once, counted in memory (so never resent), instead of every request
// waiting out the timeout; a connection silent for REDIS_TIMEOUT_MS is closed and reopened.
const TIME_LIMITS = {
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 1,
  connectTimeout: REDIS_TIMEOUT_MS,
  commandTimeout: REDIS_TIMEOUT_MS,
  socketTimeout: REDIS_TIMEOUT_MS,
} satisfies RedisOptions;

function redisClient(url: string, logger: Logger): Redis {
  const client = new Redis(url, TIME_LIMITS);
  logOutages(client, logger, 'redis');
  return client;
}

/** A count is one script on one key, so never two slots; a slot whose master is away fails its counts like an absent Redis. */
function clusterClient(seeds: readonly string[], logger: Logger): Cluster {
  const nodes = seeds.map((seed) => new URL(seed));
  const withCredentials = nodes.find((node) => node.username !== '' || node.password !== '');
  const client = new Cluster(
    nodes.map((node) => ({ host: node.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(node.port || 6379) })),
    {
      enableOfflineQueue: false,
      enableReadyCheck: true,
      slotsRefreshTimeout: REDIS_TIMEOUT_MS,
      // A redirection or a retry after a node went away waits this long, at most maxRedirections times.
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      maxRedirections: 8,
      redisOptions: {
        ...TIME_LIMITS,
        username: withCredentials && decodeURIComponent(withCredentials.username) || undefined,
        password: withCredentials && decodeURIComponent(withCredentials.password) || undefined,
        tls: nodes[0]?.protocol === 'rediss:' ? {} : undefined,
      },
    },
  );
  logOutages(client, logger, 'redis cluster');
  return client;
}

/**
 * One line when the client loses Redis (with the first error: refused, timed out, a password refused) and one when it is
 * ready again; the reconnect attempts in between fail alike, several a second with a refused password, and say nothing new.
 */
function logOutages(client: Redis | Cluster, logger: Logger, what: string): void {
  let away = false;
  client.on('error', (error: Error) => {
    if (away) return;
    away = true;
    logger.warn({ error: error.message }, `${what}: rate limits kept in memory until it answers`);
  });
  client.on('ready', () => {
    if (!away) return;
    away = false;
    logger.info(`${what}: answers again, rate limits shared through it`);
  });
}

function firstConnection(client: Redis | Cluster): Promise<void> {
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
