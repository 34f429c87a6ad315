import { randomBytes } from 'node:crypto';
import test from 'ava';
import type { Middleware } from 'koa';
import { Redis } from 'ioredis';
import { saveAccount } from '../../lib/auth/accounts.ts';
import { RateLimitCounters, rateLimit, type RateLimitOptions } from '../../lib/ratelimit/index.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { jsonPost, limitHeaders } from '../helpers/http.ts';
import { collectingLogger, entryApp, listenApp, type ListeningApp } from '../helpers/koa-app.ts';
import { REDIS_URL, testWithRedis } from '../helpers/redis.ts';
import { serviceForFile, startTestService, type ServiceUnderTest } from '../helpers/service.ts';

const withRedis = await testWithRedis();
let service: ServiceUnderTest;

serviceForFile({ tenants: ['acme', 'globex'] }, (started) => {
  service = started;
});

/** The real tenant and error middlewares, then the limit, then a handler answering 200. */
async function limitedApp(t: { teardown: (fn: () => Promise<void>) => void }, options: RateLimitOptions, proxy = false): Promise<ListeningApp> {
  const app = entryApp({
    logger: service.runtime.logger,
    runtime: service.runtime,
    tenant: true,
    proxy,
    steps: [
      rateLimit(service.runtime, options),
      (ctx) => {
        ctx.body = { ok: true };
      },
    ],
  });
  const listening = await listenApp(app);
  t.teardown(listening.close);
  return listening;
}

function uniqueName(): string {
  return `test-${randomBytes(4).toString('hex')}`;
}

test('the headers count down exactly, then 429 with Retry-After', async (t) => {
  const app = await limitedApp(t, { name: uniqueName(), windowMs: 60_000, max: 3 });
  for (const remaining of [2, 1, 0]) {
    const response = await fetch(app.url);
    t.is(response.status, 200);
    const headers = limitHeaders(response);
    t.like(headers, { limit: 3, remaining });
    t.true(headers.reset >= 1 && headers.reset <= 60);
  }
  const refused = await fetch(app.url);
  t.is(refused.status, 429);
  t.deepEqual(await refused.json(), { error: 'too many requests' });
  t.like(limitHeaders(refused), { limit: 3, remaining: 0 });
  t.is(refused.headers.get('retry-after'), refused.headers.get('ratelimit-reset'));
  t.true(Number(refused.headers.get('retry-after')) >= 1);
});

test('the budget comes back when the window ends', async (t) => {
  const app = await limitedApp(t, { name: uniqueName(), windowMs: 1500, max: 1 });
  t.is((await fetch(app.url)).status, 200);
  // The window opened while that request was served, so it ends at most 1.5 s from now (a busy
  // machine can take long to answer; counting from before the request made this test flaky).
  const answered = Date.now();
  const refused = await fetch(app.url);
  t.is(refused.status, 429);
  t.true(['1', '2'].includes(refused.headers.get('retry-after') ?? ''));
  await new Promise((resolve) => setTimeout(resolve, answered + 1600 - Date.now()));
  const again = await fetch(app.url);
  t.is(again.status, 200);
  t.like(limitHeaders(again), { remaining: 0 });
});

test('each tenant has its own budget', async (t) => {
  const app = await limitedApp(t, { name: uniqueName(), windowMs: 60_000, max: 1 });
  t.is((await fetch(app.url, { headers: { tenant: 'acme' } })).status, 200);
  t.is((await fetch(app.url, { headers: { tenant: 'acme' } })).status, 429);
  t.is((await fetch(app.url, { headers: { tenant: 'globex' } })).status, 200);
  t.is((await fetch(app.url)).status, 200);
});

test('each client address has its own budget, X-Forwarded-For only behind a trusted proxy', async (t) => {
  const trusting = await limitedApp(t, { name: uniqueName(), windowMs: 60_000, max: 1 }, true);
  t.is((await fetch(trusting.url, { headers: { 'x-forwarded-for': '203.0.113.1' } })).status, 200);
  t.is((await fetch(trusting.url, { headers: { 'x-forwarded-for': '203.0.113.1' } })).status, 429);
  t.is((await fetch(trusting.url, { headers: { 'x-forwarded-for': '203.0.113.2' } })).status, 200);
  const direct = await limitedApp(t, { name: uniqueName(), windowMs: 60_000, max: 1 });
  t.is((await fetch(direct.url, { headers: { 'x-forwarded-for': '203.0.113.1' } })).status, 200);
  t.is((await fetch(direct.url, { headers: { 'x-forwarded-for': '203.0.113.2' } })).status, 429);
});

test('limits with the same name share one budget', async (t) => {
  const options = { name: uniqueName(), windowMs: 60_000, max: 2 };
  const first = await limitedApp(t, options);
  const second = await limitedApp(t, options);
  t.is((await fetch(first.url)).status, 200);
  t.like(limitHeaders(await fetch(second.url)), { remaining: 0 });
  t.is((await fetch(first.url)).status, 429);
});

test('login: every attempt counts, 400s included, and the answers carry the headers', async (t) => {
  const limited = await startTestService(t, { expert: { rateLimit: { login: { windowMs: 60_000, max: 3 } } } });
  await saveAccount(limited.runtime.tenantDatabase, 'acme', { username: 'rita', password: 'limits' });
  const attempts: Array<[unknown, number]> = [['{"username":', 400], [{ username: 'rita' }, 400], [{ username: 'rita', password: 'wrong' }, 401]];
  for (const [index, [body, status]] of attempts.entries()) {
    const response = await limited.fetch('/auth/login', jsonPost(body, { tenant: 'acme' }));
    t.is(response.status, status);
    t.like(limitHeaders(response), { limit: 3, remaining: 2 - index });
  }
  const refused = await limited.fetch('/auth/login', jsonPost({ username: 'rita', password: 'limits' }, { tenant: 'acme' }));
  t.is(refused.status, 429);
  t.truthy(refused.headers.get('retry-after'));
  const otherTenant = await limited.fetch('/auth/login', jsonPost({ username: 'rita', password: 'limits' }, { tenant: 'globex' }));
  t.is(otherTenant.status, 401);
});

withRedis('with Redis, two instances share one budget', async (t) => {
  const tenant = uniqueName();
  await createTenant(service.runtime.knex, tenant);
  const expert = { rateLimit: { login: { windowMs: 60_000, max: 4 } } };
  const [one, two] = await Promise.all([
    startTestService(t, { expert, env: { REDIS_URL } }),
    startTestService(t, { expert, env: { REDIS_URL } }),
  ]);
  const remaining: number[] = [];
  for (const instance of [one, two, one, two]) {
    const response = await instance.fetch('/auth/login', jsonPost({ username: 'x', password: 'y' }, { tenant }));
    t.is(response.status, 401);
    remaining.push(limitHeaders(response).remaining);
  }
  t.deepEqual(remaining, [3, 2, 1, 0]);
  for (const instance of [one, two]) {
    t.is((await instance.fetch('/auth/login', jsonPost({ username: 'x', password: 'y' }, { tenant }))).status, 429);
  }
  const redis = new Redis(REDIS_URL);
  t.teardown(() => redis.quit().then(() => undefined));
  const key = `spaceport:ratelimit:login:60000:${tenant}|127.0.0.1`;
  t.is(await redis.get(key), '6');
  const ttl = await redis.pttl(key);
  t.true(ttl > 0 && ttl <= 60_000);
  await redis.del(key);
});

test('a Redis client that cannot be made leaves the limit in memory, with one log line and no password in it', async (t) => {
  const { logger, logs } = collectingLogger();
  // The configuration refuses such a URL at start-up; this is the limiter's own guard behind it.
  const runtime = { ...service.runtime, logger, rateCounters: new RateLimitCounters('redis://:secret@127.0.0.1:99999', logger) };
  const answer: Middleware = (ctx) => {
    ctx.body = { ok: true };
  };
  const app = await listenApp(entryApp({ logger, runtime, tenant: true, steps: [rateLimit(runtime, { name: uniqueName(), windowMs: 60_000, max: 2 }), answer] }));
  t.teardown(app.close);
  const statuses = [];
  for (let call = 0; call < 3; call += 1) statuses.push((await fetch(app.url)).status);
  t.deepEqual(statuses, [200, 200, 429]);
  const redisLines = logs.text().split('\n').filter((line) => line.includes('redis'));
  t.is(redisLines.length, 1, logs.text());
  t.false(logs.text().includes('secret'), logs.text());
});
