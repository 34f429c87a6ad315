import { Cluster, Redis, type RedisOptions, type Result } from 'ioredis';
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

/**
 * A count, on its key alone (so never two slots of a cluster): the window begins with the key's first request and lasts
 * `windowMs` to the millisecond, as in memory. rate-limiter-flexible's script kept whole seconds (`EX`): a window of
 * 400 ms lasted 1 s in Redis, one of 1.5 s lasted 2 s.
 */
const COUNT_SCRIPT = `redis.call('set', KEYS[1], 0, 'PX', ARGV[1], 'NX')
local consumed = redis.call('incr', KEYS[1])
local left = redis.call('pttl', KEYS[1])
if left == -1 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return {consumed, left}`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** COUNT_SCRIPT, sent by its SHA1 (again in full after Redis lost its scripts, as a restarted one has). */
    spaceportCount(key: string, windowMs: string): Result<[number, number], Context>;
  }
}

function sharedCounter(client: Redis | Cluster, logger: Logger, { name, windowMs }: RateLimitBudget): RateCounter {
  // The window is part of the key: while two releases with different windows serve (a rolling upgrade), each counts its own.
  const prefix = `${KEY_PREFIX}:${name}:${windowMs}:`;
  const window = String(windowMs);
  const memory = new MemoryWindows(windowMs);
  const outages = new Outages();
  return (key) => {
    const way = outages.way();
    if (way === 'memory') return memory.consume(key);
    return client.spaceportCount(`${prefix}${key}`, window).then(
      ([consumed, left]): Spent => {
        if (outages.answered(way)) logger.info({ limit: name }, 'redis: the limit is counted in Redis again');
        return { consumed, msBeforeReset: left };
      },
      (refusal: unknown) => {
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
  client.defineCommand('spaceportCount', { numberOfKeys: 1, lua: COUNT_SCRIPT });
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
  client.defineCommand('spaceportCount', { numberOfKeys: 1, lua: COUNT_SCRIPT });
  logOutages(client, logger, 'redis cluster');
  return client;
}

/**
 * One line when the client loses Redis (with the first error: refused, timed out, a password refused) and one when it is
 * ready again; the reconnect attempts in between fail alike, several a second with a refused password, and say nothing new.
 */
function logOutages(client: Redis | Cluster, logger: Logger, what: string): void {
  let away = false;
  client.on('error', (error: Error & { lastNodeError?: unknown }) => {
    if (away) return;
    away = true;
    // A cluster's own error ('Failed to refresh slots cache.') carries why in the last node's: a password refused, say.
    const why = error.lastNodeError instanceof Error ? `${error.message} ${error.lastNodeError.message}` : error.message;
    logger.warn({ error: why }, `${what}: rate limits kept in memory until it answers`);
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
