import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { TenantDatabase } from '../../lib/db/tenant-database.ts';
import { answeringServiceRoutes } from '../../lib/app.ts';
import { saveAccount } from '../../lib/auth/accounts.ts';
import { signSystemToken } from '../../lib/auth/tokens.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { databaseProxy } from '../helpers/database-proxy.ts';
import { serverUrl } from '../helpers/database.ts';
import { KeepAliveClient } from '../helpers/keep-alive.ts';
import { latencyRelay } from '../helpers/latency-relay.ts';
import { dropTestDatabase, serveOver, startTestService, testDatabaseUrl } from '../helpers/service.ts';

test.after.always(dropTestDatabase);

test('/livez and /readyz answer 200 {status: "ok"} while the service serves and its database answers', async (t) => {
  const service = await startTestService(t);
  for (const path of ['/livez', '/readyz']) {
    const response = await service.fetch(path);
    t.is(response.status, 200, path);
    t.deepEqual(await response.json(), { status: 'ok' }, path);
  }
});

test('with the database away, /readyz is 503 {error} and /livez still 200', async (t) => {
  const service = await startTestService(t);
  const away = new TenantDatabase('postgres://postgres@127.0.0.1:1/x', { queryTimeoutMs: 500 });
  const url = await serveOver(t, { ...service.runtime, tenantDatabase: away }, () => away.close());
  const ready = await fetch(`${url}/readyz`);
  t.is(ready.status, 503);
  t.deepEqual(await ready.json(), { error: 'database unavailable' });
  t.is((await fetch(`${url}/livez`)).status, 200);
});

test('a flood of /readyz does not make the balancer\'s own check 503: checks asked together share one statement', async (t) => {
  // Anyone may ask /readyz, with no tenant and no rate limit, and each check queued for the one
  // reserved connection: past what a round trip to the database allows (a distant database),
  // the queue outgrew the check's 1.5 s, every check was 503 and the balancer took the instance
  // out, while the database answered and requests were served.
  const service = await startTestService(t);
  const relay = await latencyRelay(await testDatabaseUrl(), 40);
  const distant = new TenantDatabase(relay.url, { queryTimeoutMs: 1500, connectTimeoutMs: 10_000 });
  const url = await serveOver(t, { ...service.runtime, tenantDatabase: distant }, () => distant.close(), () => relay.close());
  t.is((await fetch(`${url}/readyz`)).status, 200, 'one check alone');
  let flooding = true;
  const flooder = async () => {
    while (flooding) await fetch(`${url}/readyz`).then((response) => response.arrayBuffer());
  };
  const flood = Array.from({ length: 40 }, flooder);
  const statuses: number[] = [];
  try {
    await sleep(1000);
    for (let check = 0; check < 5; check += 1) {
      statuses.push((await fetch(`${url}/readyz`)).status);
      await sleep(300);
    }
  } finally {
    flooding = false;
    await Promise.all(flood);
  }
  t.deepEqual(statuses, [200, 200, 200, 200, 200]);
});

test('from the start of close() on, /readyz is 503 draining on a connection still open', async (t) => {
  const service = await startTestService(t);
  const balancer = new KeepAliveClient(service.url);
  t.teardown(() => balancer.close());
  t.is((await balancer.get('/readyz')).status, 200);
  const closing = service.close();
  const draining = await balancer.get('/readyz');
  t.is(draining.status, 503);
  t.deepEqual(JSON.parse(draining.body), { error: 'draining' });
  await closing;
});

test('/livez, /readyz and /metrics are declared routes: listed by make routes and in /openapi.json', async (t) => {
  const service = await startTestService(t);
  const listed = answeringServiceRoutes(service.runtime.config).map((route) => `${route.method} ${route.path}`);
  for (const route of ['GET /livez', 'GET /readyz', 'GET /metrics', 'GET /healthz']) t.true(listed.includes(route), route);
  const document = (await (await service.fetch('/openapi.json')).json()) as { paths: Record<string, { get?: { responses: Record<string, unknown> } }> };
  t.deepEqual(Object.keys(document.paths['/readyz']?.get?.responses ?? {}).sort(), ['200', '400', '503'], '400: an HTTP/1.1 request without Host');
  t.truthy(document.paths['/livez']?.get);
  t.true(Object.keys(document.paths['/metrics']?.get?.responses ?? {}).includes('401'));
});

test('the request line names the authenticated caller by uid, and no uid when there is none', async (t) => {
  const service = await startTestService(t, { expert: { spaces: { enabled: true } } });
  await createTenant(service.runtime.knex, 'acme');
  const { account } = await saveAccount(service.runtime.tenantDatabase, 'acme', { username: 'alice', password: 'a-password', role: 'admin' });
  const token = await signSystemToken(service.runtime, account, 'acme');
  await service.fetch('/spaces', { headers: { tenant: 'acme', authorization: `Bearer ${token}`, 'x-request-id': 'with-caller' } });
  await service.fetch('/spaces', { headers: { tenant: 'acme', 'x-request-id': 'without-caller' } });
  await new Promise((resolve) => setTimeout(resolve, 20));
  const line = (id: string) => service.logs().find((entry) => entry.requestId === id && entry.msg === 'request');
  t.like(line('with-caller'), { status: 200, tenant: 'acme', uid: account.uid });
  t.like(line('without-caller'), { status: 401 });
  t.false('uid' in (line('without-caller') ?? {}));
});

test('the request line says who chose its requestId: a caller may send any well-formed id, one of the service\'s UUIDs included', async (t) => {
  // SPEC §17.5: what is recorded says whether the id came from the caller. The line did not, so
  // a caller sending another request's UUID had its lines read as that request's.
  const service = await startTestService(t);
  const theirs = (await service.fetch('/livez')).headers.get('x-request-id') ?? '';
  const borrowed = await service.fetch('/livez', { headers: { 'x-request-id': theirs } });
  t.is(borrowed.headers.get('x-request-id'), theirs);
  await new Promise((resolve) => setTimeout(resolve, 20));
  const lines = service.logs().filter((entry) => entry.requestId === theirs && entry.msg === 'request');
  t.deepEqual(lines.map((entry) => entry.requestIdFrom), ['service', 'caller']);
});

test('the checks keep their reserved connection between checks: a database slow to connect does not make each check 503', async (t) => {
  // pg's pool closed an idle connection after 10 s, so a balancer checking every 10 s or more
  // (Kubernetes' default period) had each check open one; a database whose connections take
  // longer than the check's 1.5 s (distant, DATABASE_CONNECT_TIMEOUT_MS raised) was then 503 for
  // ever while requests were served.
  const proxy = await databaseProxy(serverUrl());
  const database = new TenantDatabase(proxy.url, { connectTimeoutMs: 5000 });
  t.teardown(async () => {
    await database.close();
    await proxy.close();
  });
  await database.answers();
  const opened = proxy.connections().opened;
  await sleep(10_500);
  await database.answers();
  t.is(proxy.connections().opened, opened, 'the second check opened no connection');
});
