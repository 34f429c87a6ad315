import test, { type ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import type { Middleware } from 'koa';
import { createLogger } from '../../lib/logger/index.ts';
import { RateLimitCounters } from '../../lib/ratelimit/counters.ts';
import { rateLimit } from '../../lib/ratelimit/index.ts';
import { createRuntime, releaseRuntime } from '../../lib/server.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { entryApp, listenApp } from '../helpers/koa-app.ts';
import { REDIS_URL, testWithRedis } from '../helpers/redis.ts';
import { dropTestDatabase, TEST_JWT_SECRET, testDatabaseUrl } from '../helpers/service.ts';
import { fixtureProjects, startWithProjects } from '../helpers/projects.ts';
import { scratchFolder } from '../helpers/scratch.ts';

// Decided before any test is declared: ava takes declarations only until the file first waits.
const withRedis = await testWithRedis();

test.after.always(dropTestDatabase);

withRedis('with REDIS_URL, two instances share one public-route budget per client and tenant', async (t) => {
  const options = { env: { REDIS_URL }, expert: { rateLimit: { public: { windowMs: 60_000, max: 3 } } } };
  const first = await startWithProjects(t, fixtureProjects('chain'), options);
  const second = await startWithProjects(t, fixtureProjects('chain'), options);
  // A tenant made for this run keeps the budget apart from earlier runs against the same Redis.
  const [tenant, otherTenant] = [`redis${randomBytes(5).toString('hex')}`, `redis${randomBytes(5).toString('hex')}`];
  await createTenant(first.runtime.knex, tenant);
  await createTenant(first.runtime.knex, otherTenant);
  const call = (service: typeof first, name = tenant) => service.fetch('/api/guarded/public', { method: 'POST', headers: { tenant: name } });

  const answers = [await call(first), await call(second), await call(first)];
  t.deepEqual(answers.map((response) => response.status), [200, 200, 200]);
  t.deepEqual(answers.map((response) => response.headers.get('ratelimit-remaining')), ['2', '1', '0']);
  for (const service of [second, first]) {
    const limited = await call(service);
    t.is(limited.status, 429);
    t.true(Number(limited.headers.get('retry-after')) > 0);
  }
  t.is((await call(second, otherTenant)).status, 200, 'the budget is per tenant');
});

withRedis('every shutdown task, closing the Redis client included, is registered by the time createRuntime returns', async (t) => {
  const env = { DATABASE_URL: await testDatabaseUrl(), JWT_SECRET: TEST_JWT_SECRET, DATA_DIR: scratchFolder('data'), LOG_LEVEL: 'silent', REDIS_URL };
  const runtime = await createRuntime({ env, expert: {} });
  t.teardown(() => releaseRuntime(runtime));
  const tasks = [...runtime.shutdownTasks];
  const answer: Middleware = (ctx) => {
    ctx.body = { ok: true };
  };
  const app = await listenApp(entryApp({ logger: runtime.logger, steps: [rateLimit(runtime, { name: `test-${randomBytes(4).toString('hex')}`, windowMs: 60_000, max: 5 }), answer] }));
  t.teardown(app.close);
  t.is((await fetch(app.url)).status, 200);
  t.deepEqual([...runtime.shutdownTasks], tasks);
});

withRedis('a limit whose window changed (a rolling upgrade) starts a count of its own in Redis, not the old window\'s', async (t) => {
  const name = `window-${randomBytes(4).toString('hex')}`;
  const [oldRelease, newRelease] = [new RateLimitCounters(REDIS_URL, createLogger('silent')), new RateLimitCounters(REDIS_URL, createLogger('silent'))];
  t.teardown(() => Promise.all([oldRelease.close(), newRelease.close()]));
  const before = await oldRelease.counterFor({ name, windowMs: 60_000, max: 1 })('client');
  t.is(before.consumed, 1);
  const after = await newRelease.counterFor({ name, windowMs: 1_000, max: 1 })('client');
  t.is(after.consumed, 1, 'the new window counted on the old one\'s key');
  t.true(after.msBeforeReset <= 1_000, `${after.msBeforeReset} ms before the reset of a 1 s window`);
});

/**
 * A request that waited for Redis took about its 1 s command timeout; one that did not, a few
 * milliseconds. The bound sits between the two, with room for a machine busy with other tests.
 */
const NO_WAIT_MS = 600;

const publicCall = (service: Awaited<ReturnType<typeof startWithProjects>>, tenant = 'default') =>
  service.fetch('/api/guarded/public', { method: 'POST', headers: { tenant } });

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = Date.now();
  const result = await work();
  return [result, Date.now() - started];
}

test.serial('when Redis refuses connections, the limit is kept in memory and no request waits for it', async (t) => {
  const options = { env: { REDIS_URL: 'redis://127.0.0.1:1' }, expert: { rateLimit: { public: { windowMs: 60_000, max: 20 } } } };
  const service = await startWithProjects(t, fixtureProjects('chain'), options);
  const waits: number[] = [];
  for (const remaining of ['19', '18', '17', '16', '15']) {
    const [response, ms] = await timed(() => publicCall(service));
    waits.push(ms);
    t.is(response.status, 200);
    t.is(response.headers.get('ratelimit-remaining'), remaining);
  }
  // Only the first request may wait for the connection attempt begun at start-up (at most 1 s).
  t.true(waits[0] < 1000 + NO_WAIT_MS, `first request ${waits[0]} ms`);
  t.true(Math.max(...waits.slice(1)) < NO_WAIT_MS, `later requests ${waits.slice(1).join(', ')} ms`);
});

interface RedisProxy {
  url: string;
  /** Connections refused, open ones closed. */
  cut: () => Promise<void>;
  /** Connections kept and accepted, but nothing reaches Redis any more: a black hole. */
  freeze: () => void;
  /**
   * Redis still answers a connection's ready check, but never a count (a Lua script, as
   * the service counts): as during a failover, when Redis pauses its writes.
   */
  refuseCounts: () => void;
  open: () => Promise<void>;
}

/** A TCP proxy to the test Redis that can be cut, frozen, and opened again. */
async function redisProxy(t: ExecutionContext): Promise<RedisProxy> {
  const target = new URL(REDIS_URL);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let frozen: 'all' | 'counts' | false = false;
  const open = async () => {
    frozen = false;
    const listening = createServer((client) => {
      const upstream = connect(Number(target.port || 6379), target.hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('error', () => socket.destroy());
        socket.on('close', () => sockets.delete(socket));
      }
      client.on('data', (chunk: Buffer) => {
        if (frozen === 'all' || (frozen === 'counts' && /EVAL/i.test(chunk.toString('latin1')))) return;
        upstream.write(chunk);
      });
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => listening.listen(port, '127.0.0.1', resolve));
    port = (listening.address() as AddressInfo).port;
    server = listening;
  };
  const cut = async () => {
    const closed = new Promise<void>((resolve) => server?.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  await open();
  t.teardown(() => void cut());
  return {
    url: `redis://127.0.0.1:${port}`,
    cut,
    open,
    freeze: () => {
      frozen = 'all';
    },
    refuseCounts: () => {
      frozen = 'counts';
    },
  };
}

/** The service over a Redis proxy (a budget out of reach), a tenant of its own, and its count in Redis. */
async function serviceBehindProxy(t: ExecutionContext) {
  const proxy = await redisProxy(t);
  const options = { env: { REDIS_URL: proxy.url }, expert: { rateLimit: { public: { windowMs: 60_000, max: 1_000_000 } } } };
  const service = await startWithProjects(t, fixtureProjects('chain'), options);
  const tenant = `redis${randomBytes(5).toString('hex')}`;
  await createTenant(service.runtime.knex, tenant);
  const redis = new Redis(REDIS_URL);
  const key = `spaceport:ratelimit:public:60000:${tenant}|127.0.0.1`;
  t.teardown(() => redis.del(key).then(() => redis.quit()).then(() => undefined));
  const counted = async () => Number(await redis.get(key));
  const call = async () => {
    const [response, ms] = await timed(() => publicCall(service, tenant));
    t.is(response.status, 200);
    return ms;
  };
  return { proxy: { ...proxy, service }, call, counted };
}

/** Calls until a request is counted in Redis again (Redis being back), for 10 s at most. */
async function countedInRedisAgain(t: ExecutionContext, call: () => Promise<number>, counted: () => Promise<number>): Promise<void> {
  const before = await counted();
  let now = before;
  for (let attempt = 0; attempt < 100 && now === before; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    await call();
    now = await counted();
  }
  t.is(now, before + 1, `one request counted in Redis once it answers again (${before} before)`);
}

withRedis('when Redis goes away, requests are counted in memory at once; once it is back, in Redis again', async (t) => {
  const { proxy, call, counted } = await serviceBehindProxy(t);
  await call();
  t.is(await counted(), 1, 'counted in Redis from the first request after start-up');
  await proxy.cut();
  const waits = [await call(), await call(), await call()];
  t.true(Math.max(...waits) < NO_WAIT_MS, `while Redis is away: ${waits.join(', ')} ms`);
  t.is(await counted(), 1);
  await proxy.open();
  await countedInRedisAgain(t, call, counted);
});

/** Redis silent on open connections, or answering them but counting nothing (its writes paused, as in a failover). */
const silences = [
  { how: 'stops answering on an open connection', silence: (proxy: RedisProxy) => proxy.freeze() },
  { how: 'answers but counts nothing (writes paused, as in a failover)', silence: (proxy: RedisProxy) => proxy.refuseCounts() },
];

for (const { how, silence } of silences) {
  withRedis(`when Redis ${how}, only the first second of requests waits for it`, async (t) => {
    const { proxy, call, counted } = await serviceBehindProxy(t);
    await call();
    t.is(await counted(), 1);
    silence(proxy);
    const waits: number[] = [];
    const started = Date.now();
    while (Date.now() - started < 3000) waits.push(await call());
    // Redis failed the first count after a second: the limit is kept in memory for a while.
    t.true(waits.length >= 4, `${waits.length} requests in 3 s: ${waits.slice(0, 5).join(', ')} ms`);
    t.true(Math.max(...waits.slice(1)) < NO_WAIT_MS, `after the first: ${Math.max(...waits.slice(1))} ms at most`);
    await proxy.cut();
    await proxy.open();
    await countedInRedisAgain(t, call, counted);
  });
}

withRedis('a long write pause: after the first second, one request at a time waits to find out whether Redis is back', async (t) => {
  const { proxy, call } = await serviceBehindProxy(t);
  await call();
  proxy.refuseCounts();
  const clients = 10;
  const waits: number[] = [];
  const started = Date.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() - started < 8000) waits.push(await call());
    }),
  );
  // The ten requests in flight when Redis stopped counting wait for it; after that, a spell in
  // memory ends with one request trying Redis again (at about 6 s), not all ten.
  const slow = waits.filter((ms) => ms >= NO_WAIT_MS).length;
  t.true(slow <= clients + 2, `${slow} of ${waits.length} requests waited ${NO_WAIT_MS} ms or more`);
});

/** The service's lines about Redis, by message. */
function redisLines(service: Awaited<ReturnType<typeof startWithProjects>>): Map<string, Record<string, unknown>[]> {
  const lines = new Map<string, Record<string, unknown>[]>();
  for (const entry of service.logs() as unknown as Record<string, unknown>[]) {
    const message = String(entry.msg);
    if (!/^redis/.test(message)) continue;
    lines.set(message, [...(lines.get(message) ?? []), entry]);
  }
  return lines;
}

const describe = (lines: Map<string, unknown[]>) => [...lines].map(([message, entries]) => `${entries.length} × ${message}`).join('; ');

withRedis('an outage of Redis is logged once when it begins, with why, and once when it ends, not at every reconnect attempt', async (t) => {
  const { proxy, call, counted } = await serviceBehindProxy(t);
  const service = proxy.service;
  await call();
  await proxy.cut();
  // Over 7 s the client tries to reconnect many times, and the limit's spell in memory (5 s) ends with a failed probe.
  const started = Date.now();
  while (Date.now() - started < 7000) {
    await call();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const during = redisLines(service);
  for (const [message, entries] of during) t.is(entries.length, 1, `during the outage: ${describe(during)} (${message})`);
  t.true([...during.values()].flat().some((entry) => /ECONNREFUSED/.test(String(entry.error))), `the reason is given: ${JSON.stringify([...during.values()].flat())}`);
  await proxy.open();
  await countedInRedisAgain(t, call, counted);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const after = redisLines(service);
  const ended = [...after.keys()].filter((message) => !during.has(message));
  t.true(ended.length > 0, `a line says Redis answers again: ${describe(after)}`);
  for (const [message, entries] of after) t.is(entries.length, 1, `over the outage and after it: ${describe(after)} (${message})`);
});

withRedis('a Redis refusing the service\'s password is logged once, with why, not at every reconnect attempt', async (t) => {
  const target = new URL(REDIS_URL);
  target.username = 'spaceport-nobody';
  target.password = 'not-the-password';
  const options = { env: { REDIS_URL: target.href }, expert: { rateLimit: { public: { windowMs: 60_000, max: 1_000_000 } } } };
  const service = await startWithProjects(t, fixtureProjects('chain'), options);
  const started = Date.now();
  while (Date.now() - started < 3000) {
    t.is((await publicCall(service)).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const lines = redisLines(service);
  for (const [message, entries] of lines) t.is(entries.length, 1, `${describe(lines)} (${message})`);
  t.true([...lines.values()].flat().some((entry) => /WRONGPASS/.test(String(entry.error))), `the reason is given: ${JSON.stringify([...lines.values()].flat())}`);
  t.false(service.logText().includes('not-the-password'), 'the password is never logged');
});

withRedis('a window shorter than a second, or not whole seconds, lasts as long in Redis as declared, not rounded up to whole seconds', async (t) => {
  for (const windowMs of [400, 1500]) {
    const options = { env: { REDIS_URL }, expert: { rateLimit: { public: { windowMs, max: 1 } } } };
    const service = await startWithProjects(t, fixtureProjects('chain'), options);
    const tenant = `redis${randomBytes(5).toString('hex')}`;
    await createTenant(service.runtime.knex, tenant);
    const redis = new Redis(REDIS_URL);
    t.teardown(() => redis.quit().then(() => undefined));
    const first = await publicCall(service, tenant);
    t.is(first.status, 200);
    const left = await redis.pttl(`spaceport:ratelimit:public:${windowMs}:${tenant}|127.0.0.1`);
    t.true(left > 0 && left <= windowMs, `windowMs ${windowMs}: Redis keeps the count ${left} ms more`);
    t.is(first.headers.get('ratelimit-reset'), String(Math.ceil(windowMs / 1000)));
    t.is((await publicCall(service, tenant)).status, 429);
    // Once the declared window is over (with room for a busy machine), the next request starts a new one.
    await new Promise((resolve) => setTimeout(resolve, windowMs + 100));
    const again = await publicCall(service, tenant);
    t.is(again.status, 200, `windowMs ${windowMs}: admitted again after it`);
  }
});
