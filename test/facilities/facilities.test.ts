import test from 'ava';
import { pathToFileURL } from 'node:url';
import * as facilities from '../../lib/facilities/index.ts';
import facilitiesConfig from '../../lib/facilities/config.ts';
import { withFacilityState } from '../../lib/facilities/current.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { dropTestDatabase, TEST_JWT_SECRET, testDatabaseUrl, type ServiceUnderTest } from '../helpers/service.ts';
import { json, startWithProjects } from '../helpers/projects.ts';
import { writeOutsideProjects } from '../helpers/outside-project.ts';

const { projectsDir, outsideRoutes } = writeOutsideProjects();
let service: ServiceUnderTest;
test.before(async () => {
  service = await startWithProjects(undefined, projectsDir, { expert: { projects: { default: 'outside' }, limits: { jsonBytes: 4096 } } });
  await createTenant(service.runtime.knex, 'acme');
});
test.after.always(async () => {
  await service?.close();
  await dropTestDatabase();
});

test('a project outside the repository imports its own package from its own node_modules', async (t) => {
  const response = await service.fetch('/api/outside/greeting?name=Ada');
  t.is(response.status, 200);
  t.deepEqual(await response.json(), { greeting: 'hello, Ada' });
});

test('`spaceport` and `spaceport/config` resolve to the very modules the service runs', async (t) => {
  const routes = (await import(pathToFileURL(outsideRoutes).href)) as { spaceport: unknown; configFromModule: unknown };
  t.is(routes.spaceport, facilities);
  t.is(routes.configFromModule, facilitiesConfig);
  t.is(facilities.config, facilitiesConfig);
});

test('config is the resolved configuration, with no secret in it', async (t) => {
  const response = await service.fetch('/api/outside/config');
  const text = await response.text();
  const body = JSON.parse(text) as { config: Record<string, unknown>; sameObject: boolean };
  t.true(body.sameObject);
  t.like(body.config, { projectsDir, limits: { jsonBytes: 4096 }, projects: { default: 'outside', onError: 'fail' }, tenancy: { defaultTenant: 'default' } });
  t.false(text.includes(TEST_JWT_SECRET));
  t.false(text.includes(new URL(await testDatabaseUrl()).pathname.slice(1)), 'no database URL');
  for (const key of ['jwtSecret', 'databaseUrl', 'secrets']) t.false(key in body.config, key);
});

test('config cannot be changed by a handler, at any depth', async (t) => {
  const body = await json(await service.fetch('/api/outside/config-writes'));
  t.deepEqual(body, {
    attempts: { top: 'TypeError', nested: 'TypeError', removal: 'TypeError', added: 'TypeError' },
    port: 0,
    jsonBytes: 4096,
    hasProjects: true,
  });
});

test('config is the configuration of the service serving the request', async (t) => {
  const other = await startWithProjects(t, projectsDir, { expert: { projects: { default: 'outside' }, limits: { jsonBytes: 2048 } } });
  t.like(await json(await other.fetch('/api/bare/limits')), { limitNow: 2048 });
  t.like(await json(await service.fetch('/api/bare/limits')), { limitNow: 4096 });
});

test('a TypeScript route file without package.json reads config at import time', async (t) => {
  const body = await json(await service.fetch('/api/bare/limits'));
  t.is(typeof body.limitAtImport, 'number');
});

test('signToken issues a system JWT for the request\'s tenant that verifyToken and system auth accept', async (t) => {
  const issue = await service.fetch('/api/outside/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ _id: 'acc-1', username: 'ann', role: 'admin', password: 'never-in-a-token' }),
  });
  t.is(issue.status, 200);
  const { token, claims } = (await issue.json()) as { token: string; claims: Record<string, unknown> };
  t.like(claims, { uid: 'acc-1', tenant: 'default', username: 'ann', role: 'admin' });
  t.false(JSON.stringify(claims).includes('never-in-a-token'));
  t.deepEqual(await json(await service.fetch('/api/outside/whoami', { headers: { authorization: `Bearer ${token}` } })), { uid: 'acc-1' });
  t.like(await json(await service.fetch(`/api/outside/verify?token=${token}`)), { claims: { uid: 'acc-1' } });
  t.deepEqual(await json(await service.fetch(`/api/outside/verify?token=${token}x`)), { error: 'JsonWebTokenError' });

  const acme = await service.fetch('/api/outside/token', { method: 'POST', headers: { 'content-type': 'application/json', tenant: 'acme' }, body: '{"uid":"acc-2"}' });
  t.like(await json(acme), { claims: { uid: 'acc-2', tenant: 'acme', role: 'member' } });
});

test('verifyToken inside a request refuses a token of another tenant, as system authentication does', async (t) => {
  const issue = await service.fetch('/api/outside/token', { method: 'POST', headers: { 'content-type': 'application/json', tenant: 'acme' }, body: '{"uid":"acc-3"}' });
  const { token } = (await issue.json()) as { token: string };
  const verify = (tenant: string) => service.fetch(`/api/outside/verify?token=${token}`, { headers: { tenant } });
  const whoami = (tenant: string) => service.fetch('/api/outside/whoami', { headers: { tenant, authorization: `Bearer ${token}` } });
  t.like(await json(await verify('acme')), { claims: { uid: 'acc-3', tenant: 'acme' } });
  t.is((await whoami('acme')).status, 200);
  t.deepEqual(await json(await verify('default')), { error: 'JsonWebTokenError' });
  t.is((await whoami('default')).status, 401);
  // Outside a request (a timer a route file started, run as its service's) there is no tenant to compare with: any valid token passes.
  t.like(withFacilityState(service.runtime, () => facilities.verifyToken(token)), { uid: 'acc-3', tenant: 'acme' });
});

test('db is confined to the request\'s tenant', async (t) => {
  const post = (tenant: string, text: string) =>
    service.fetch('/api/project/notes', { method: 'POST', headers: { 'content-type': 'application/json', tenant }, body: JSON.stringify({ text }) });
  t.is((await post('default', 'for default')).status, 201);
  t.is((await post('acme', 'for acme')).status, 201);
  t.deepEqual(await json(await service.fetch('/api/outside/notes')), { texts: ['for default'] });
  t.deepEqual(await json(await service.fetch('/api/outside/notes', { headers: { tenant: 'acme' } })), { texts: ['for acme'] });
});

test('defineRoutes returns its argument unchanged', (t) => {
  const routes = [{ method: 'GET', path: '/x', function: () => undefined }] as const;
  t.is(facilities.defineRoutes(routes), routes);
});
