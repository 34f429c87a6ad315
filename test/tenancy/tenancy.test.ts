import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { TenantDatabase } from '../../lib/db/tenant-database.ts';
import { TenantDirectory } from '../../lib/tenancy/index.ts';
import { latencyRelay } from '../helpers/latency-relay.ts';
import { serveOver, serviceForFile, startTestService, testDatabaseUrl, type ServiceUnderTest } from '../helpers/service.ts';

let service: ServiceUnderTest;

serviceForFile({ tenants: ['acme'] }, (started) => {
  service = started;
});

test('a request without a tenant header gets the default tenant', async (t) => {
  const response = await service.fetch('/nowhere');
  t.is(response.status, 404);
  t.deepEqual(await response.json(), { error: 'Not Found' });
  const line = service.logs().find((entry) => entry.url === '/nowhere');
  t.is(line?.tenant, 'default');
});

test('a known tenant is accepted', async (t) => {
  const response = await service.fetch('/nowhere-acme', { headers: { tenant: 'acme' } });
  t.is(response.status, 404);
  const line = service.logs().find((entry) => entry.url === '/nowhere-acme');
  t.is(line?.tenant, 'acme');
});

for (const value of ['', 'ac me', '-acme', 'acme!', 'a'.repeat(64), 'ü']) {
  test(`an invalid tenant header ${JSON.stringify(value)} is 400`, async (t) => {
    const response = await service.fetch('/x', { headers: { tenant: value } });
    t.is(response.status, 400);
    t.deepEqual(await response.json(), { error: 'invalid tenant header' });
  });
}

test('an unknown tenant is 400', async (t) => {
  const response = await service.fetch('/x', { headers: { tenant: 'nobody' } });
  t.is(response.status, 400);
  t.deepEqual(await response.json(), { error: 'unknown tenant' });
});

test('a tenant created while the service runs is accepted at once, though it was asked for just before', async (t) => {
  t.is((await service.fetch('/x', { headers: { tenant: 'latecomer' } })).status, 400);
  await service.runtime.knex('tenants').insert({ name: 'latecomer' });
  t.is((await service.fetch('/x', { headers: { tenant: 'latecomer' } })).status, 404);
});

test('a known tenant costs no query once cached', async (t) => {
  await service.fetch('/x', { headers: { tenant: 'acme' } });
  let queries = 0;
  const count = (query: { sql: string; bindings?: unknown[] }) => {
    if (query.sql.includes('"tenants"') && query.bindings?.includes('acme')) queries++;
  };
  service.runtime.knex.on('query', count);
  await service.fetch('/x', { headers: { tenant: 'acme' } });
  service.runtime.knex.off('query', count);
  t.is(queries, 0);
});

test('healthz and openapi take no tenant', async (t) => {
  t.is((await service.fetch('/healthz', { headers: { tenant: 'no such!' } })).status, 200);
  t.is((await service.fetch('/openapi.json', { headers: { tenant: 'nobody' } })).status, 200);
});

test('tenancy.defaultTenant null makes the header required', async (t) => {
  const strict = await startTestService(t, { expert: { tenancy: { defaultTenant: null } } });
  const response = await strict.fetch('/x');
  t.is(response.status, 400);
  t.deepEqual(await response.json(), { error: 'tenant header is required' });
  t.is((await strict.fetch('/x', { headers: { tenant: 'default' } })).status, 404);
});

test('a flood of unknown tenant names does not hold known tenants up: lookups asked together share one statement', async (t) => {
  // Anyone may name a tenant, and each name the instance had not seen was looked up on its own,
  // all in the service's share of the pool: with a flood of made-up names (a distant database:
  // 40 ms each way) a real tenant's first request after a start waited behind all of them, up
  // to limits.queueMs, then 503 'too many database statements of this tenant at once'.
  const relay = await latencyRelay(await testDatabaseUrl(), 40);
  const distant = new TenantDatabase(relay.url, { queryTimeoutMs: 1500, connectTimeoutMs: 10_000, queueMs: 3000 });
  // A fresh directory, as after a start: no tenant is known yet.
  const url = await serveOver(t, { ...service.runtime, tenantDatabase: distant, tenants: new TenantDirectory(distant) }, () => distant.close(), () => relay.close());
  let flooding = true;
  let made = 0;
  const flooder = async () => {
    while (flooding) {
      made += 1;
      await fetch(`${url}/x`, { headers: { tenant: `made-up-${made}` } }).then((response) => response.arrayBuffer());
    }
  };
  const flood = Array.from({ length: 300 }, flooder);
  const answers: Array<{ tenant: string; status: number; fast: boolean }> = [];
  try {
    await sleep(1500);
    for (const tenant of ['acme', 'default']) {
      const started = performance.now();
      const { status } = await fetch(`${url}/x`, { headers: { tenant } });
      // A lookup is one round trip or two (80 ms each here); behind the flood it took the queue's 3 s.
      answers.push({ tenant, status, fast: performance.now() - started < 2500 });
    }
  } finally {
    flooding = false;
    await Promise.all(flood);
  }
  t.deepEqual(answers, [
    { tenant: 'acme', status: 404, fast: true },
    { tenant: 'default', status: 404, fast: true },
  ]);
});
