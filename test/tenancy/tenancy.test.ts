import test from 'ava';
import { serviceForFile, startTestService, type ServiceUnderTest } from '../helpers/service.ts';

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
