import test from 'ava';
import { migrateLatest, rollbackLast } from '../../lib/db/migrations.ts';
import { freshKnex } from '../helpers/database.ts';
import { call, callerWith, listedNames, newTenant, spacePath, type Caller } from '../helpers/spaces.ts';
import { serviceForFile, startTestService, TEST_JWT_SECRET, type ServiceUnderTest } from '../helpers/service.ts';
import jwt from 'jsonwebtoken';
import { refusalOf, schemaRefusal } from '../helpers/refusals.ts';

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const DISABLED = { error: 'spaces feature is disabled' };

let service: ServiceUnderTest;
let admin: Caller;
let member: Caller;

serviceForFile({ expert: { spaces: { enabled: true }, limits: { jsonBytes: 64 * 1024 } } }, async (started) => {
  service = started;
  admin = await callerWith(service, 'default', { username: 'root', role: 'admin' });
  member = await callerWith(service, 'default', { username: 'mia', role: 'member', schemas: ['*'] });
});

test('POST creates a space: 201, the space, Location, ISO timestamps, a row of the tenant', async (t) => {
  const created = await call(service, 'POST', '/spaces', { as: admin, json: { name: 'Payroll', schemas: ['hr', 'finance'] } });
  t.is(created.status, 201);
  t.is(created.headers.get('location'), '/spaces/Payroll');
  const space = created.body.data as Record<string, string>;
  t.deepEqual(created.body, { success: true, data: { name: 'Payroll', schemas: ['hr', 'finance'], createdAt: space.createdAt, updatedAt: space.updatedAt } });
  t.regex(space.createdAt, ISO_UTC);
  t.is(space.updatedAt, space.createdAt);
  const row = await service.runtime.knex('spaces').where({ name: 'Payroll' }).first();
  t.like(row, { tenant: 'default', schemas: ['hr', 'finance'] });
  t.is((row.created_at as Date).toISOString(), space.createdAt);
});

test('POST without schemas stores an empty list', async (t) => {
  const created = await call(service, 'POST', '/spaces', { as: admin, json: { name: 'bare' } });
  t.is(created.status, 201);
  t.deepEqual((created.body.data as Record<string, unknown>).schemas, []);
});

test('Location carries the name percent-encoded and leads back to the space', async (t) => {
  const name = 'Q1 café-données.v2';
  const created = await call(service, 'POST', '/spaces', { as: admin, json: { name } });
  const location = created.headers.get('location');
  t.is(location, `/spaces/${encodeURIComponent(name)}`);
  t.is(location, '/spaces/Q1%20caf%C3%A9-donn%C3%A9es.v2');
  if (location === null) return;
  const fetched = await call(service, 'GET', location, { as: member });
  t.is(fetched.status, 200);
  t.deepEqual(fetched.body, created.body);
});

test('GET one: 200 with the space; 404 when absent or when the name could not exist', async (t) => {
  await call(service, 'POST', '/spaces', { as: admin, json: { name: 'lookup', schemas: ['a'] } });
  const found = await call(service, 'GET', '/spaces/lookup', { as: member });
  t.is(found.status, 200);
  t.like(found.body, { success: true, data: { name: 'lookup', schemas: ['a'] } });
  for (const path of ['/spaces/nothing-here', '/spaces/LOOKUP', '/spaces/%00', '/spaces/a%2Fb', `/spaces/${'a'.repeat(65)}`]) {
    const missing = await call(service, 'GET', path, { as: member });
    t.is(missing.status, 404, path);
    t.deepEqual(missing.body, { error: 'space not found' }, path);
  }
  // The one router decodes params as Express does, for every route: a broken escape is the URL's fault.
  const undecodable = await call(service, 'GET', '/spaces/%E0%A4%A', { as: member });
  t.deepEqual([undecodable.status, undecodable.body], [400, { error: "Failed to decode param '%E0%A4%A'" }]);
});

test('a second create of one name is 409; names compare exactly (case, Unicode form)', async (t) => {
  t.is((await call(service, 'POST', '/spaces', { as: admin, json: { name: 'dup' } })).status, 201);
  const again = await call(service, 'POST', '/spaces', { as: admin, json: { name: 'dup', schemas: ['x'] } });
  t.is(again.status, 409);
  t.deepEqual(again.body, { error: 'a space with this name already exists' });
  for (const name of ['Dup', 'DUP', 'caf\u00e9', 'cafe\u0301']) {
    t.is((await call(service, 'POST', '/spaces', { as: admin, json: { name } })).status, 201, name);
  }
  const nfd = await call(service, 'GET', spacePath('cafe\u0301'), { as: member });
  t.is((nfd.body.data as Record<string, string>).name, 'cafe\u0301');
});

test('20 parallel creates of one name: exactly one 201, nineteen 409', async (t) => {
  const attempts = await Promise.all(
    Array.from({ length: 20 }, (_, index) => call(service, 'POST', '/spaces', { as: admin, json: { name: 'race', schemas: [`s${index}`] } })),
  );
  const statuses = attempts.map((attempt) => attempt.status).sort();
  t.deepEqual(statuses, [201, ...Array<number>(19).fill(409)]);
  t.is(await service.runtime.knex('spaces').where({ tenant: 'default', name: 'race' }).count('* as n').first().then((row) => Number(row?.n)), 1);
});

test('PUT replaces the schema list and moves updatedAt; the body may repeat the name', async (t) => {
  const created = (await call(service, 'POST', '/spaces', { as: admin, json: { name: 'ledger', schemas: ['a', 'b'] } })).body.data as Record<string, string>;
  await new Promise((resolve) => setTimeout(resolve, 5));
  const replaced = await call(service, 'PUT', '/spaces/ledger', { as: admin, json: { schemas: ['c'] } });
  t.is(replaced.status, 200);
  const space = replaced.body.data as Record<string, string>;
  t.like(replaced.body, { success: true, data: { name: 'ledger', schemas: ['c'], createdAt: created.createdAt } });
  t.regex(space.updatedAt, ISO_UTC);
  t.true(space.updatedAt > created.updatedAt);
  const same = await call(service, 'PUT', '/spaces/ledger', { as: admin, json: { name: 'ledger', schemas: [] } });
  t.is(same.status, 200);
  t.deepEqual((same.body.data as Record<string, unknown>).schemas, []);
  t.deepEqual((await call(service, 'GET', '/spaces/ledger', { as: member })).body.data, same.body.data);
});

test('PUT refuses a rename and a missing or null schema list; 404 for an absent space', async (t) => {
  await call(service, 'POST', '/spaces', { as: admin, json: { name: 'fixed' } });
  const rename = await call(service, 'PUT', '/spaces/fixed', { as: admin, json: { name: 'moved', schemas: [] } });
  t.is(rename.status, 400);
  t.deepEqual(rename.body, { error: 'name cannot be changed (spaces are not renamed)' });
  const missing = await call(service, 'PUT', '/spaces/fixed', { as: admin, json: { name: 'fixed' } });
  t.deepEqual([missing.status, missing.body], [400, schemaRefusal('body.schemas: is required')]);
  const nulled = await call(service, 'PUT', '/spaces/fixed', { as: admin, json: { schemas: null } });
  t.deepEqual([nulled.status, nulled.body], [400, schemaRefusal('body.schemas: must be an array of strings')]);
  const absent = await call(service, 'PUT', '/spaces/nowhere', { as: admin, json: { schemas: ['a'] } });
  t.deepEqual([absent.status, absent.body], [404, { error: 'space not found' }]);
  t.is((await service.runtime.knex('spaces').where({ name: 'moved' })).length, 0);
});

test('DELETE answers the deleted space, then 404', async (t) => {
  const created = await call(service, 'POST', '/spaces', { as: admin, json: { name: 'doomed', schemas: ['x'] } });
  const deleted = await call(service, 'DELETE', '/spaces/doomed', { as: admin });
  t.is(deleted.status, 200);
  t.deepEqual(deleted.body, created.body);
  const again = await call(service, 'DELETE', '/spaces/doomed', { as: admin });
  t.deepEqual([again.status, again.body], [404, { error: 'space not found' }]);
  t.is((await call(service, 'GET', '/spaces/doomed', { as: admin })).status, 404);
});

test('the list is sorted in byte order (COLLATE "C") and carries total', async (t) => {
  const tenant = await newTenant(service);
  const tenantAdmin = await callerWith(service, tenant, { username: 'boss', role: 'admin' });
  for (const name of ['b', 'B', 'a', 'Z', 'é', '1', 'a b', 'a-b', 'ab']) {
    t.is((await call(service, 'POST', '/spaces', { as: tenantAdmin, json: { name } })).status, 201);
  }
  const list = await call(service, 'GET', '/spaces', { as: tenantAdmin });
  t.is(list.status, 200);
  t.is(list.body.success, true);
  t.deepEqual(listedNames(list), ['1', 'B', 'Z', 'a', 'a b', 'a-b', 'ab', 'b', 'é']);
  t.is(list.body.total, 9);
});

test('an empty tenant lists nothing', async (t) => {
  const tenant = await newTenant(service);
  const list = await call(service, 'GET', '/spaces', { as: await callerWith(service, tenant, { username: 'x', role: 'admin' }) });
  t.deepEqual(list.body, { success: true, data: [], total: 0 });
});

test('without a valid token every call is 401 with a Bearer challenge, before the body is read', async (t) => {
  const noToken = { tenant: 'default' };
  const calls: Array<[string, string]> = [['GET', '/spaces'], ['GET', '/spaces/x'], ['POST', '/spaces'], ['PUT', '/spaces/x'], ['DELETE', '/spaces/x']];
  for (const [method, path] of calls) {
    const body = method === 'POST' || method === 'PUT' ? '{"broken":' : undefined;
    const answer = await call(service, method, path, { as: noToken, raw: body, contentType: body && 'application/json' });
    t.is(answer.status, 401, `${method} ${path}`);
    t.is(answer.headers.get('www-authenticate'), 'Bearer');
    t.is(typeof answer.body.error, 'string');
  }
  const forged = jwt.sign({ uid: admin.uid, tenant: 'default', username: 'root', role: 'admin' }, 'another-secret-of-decent-length-000');
  t.is((await call(service, 'GET', '/spaces', { as: { tenant: 'default', token: forged } })).status, 401);
  const expired = jwt.sign({ uid: admin.uid, tenant: 'default', username: 'root', role: 'admin', exp: 1000 }, TEST_JWT_SECRET);
  t.is((await call(service, 'GET', '/spaces', { as: { tenant: 'default', token: expired } })).status, 401);
});

test('a token whose account no longer exists is 401', async (t) => {
  const gone = await callerWith(service, 'default', { username: 'leaver', role: 'admin' });
  t.is((await call(service, 'GET', '/spaces', { as: gone })).status, 200);
  await service.runtime.knex('documents').where({ tenant: 'default', collection: 'accounts', id: gone.uid }).delete();
  const after = await call(service, 'GET', '/spaces', { as: gone });
  t.is(after.status, 401);
  t.is(after.headers.get('www-authenticate'), 'Bearer');
  t.is((await call(service, 'POST', '/spaces', { as: gone, json: { name: 'ghost' } })).status, 401);
});

test('writes need the admin role, checked before the body', async (t) => {
  await call(service, 'POST', '/spaces', { as: admin, json: { name: 'guarded' } });
  const attempts: Array<[string, string, string]> = [
    ['POST', '/spaces', JSON.stringify({ name: 'mine' })],
    ['POST', '/spaces', '{"malformed":'],
    ['PUT', '/spaces/guarded', JSON.stringify({ schemas: ['x'] })],
    ['PUT', '/spaces/absent', 'not json at all'],
    ['DELETE', '/spaces/guarded', ''],
    ['DELETE', '/spaces/absent', ''],
  ];
  for (const [method, path, raw] of attempts) {
    const answer = await call(service, method, path, { as: member, raw: raw || undefined, contentType: raw ? 'application/json' : undefined });
    t.deepEqual([answer.status, answer.body], [403, { error: 'admin role required' }], `${method} ${path} ${raw}`);
  }
  t.is((await call(service, 'GET', '/spaces/guarded', { as: admin })).status, 200);
});

test('the role is read fresh: a promotion or demotion applies at once', async (t) => {
  const riser = await callerWith(service, 'default', { username: 'riser', role: 'member' });
  t.is((await call(service, 'POST', '/spaces', { as: riser, json: { name: 'promoted' } })).status, 403);
  await callerWith(service, 'default', { username: 'riser', role: 'admin' });
  t.is((await call(service, 'POST', '/spaces', { as: riser, json: { name: 'promoted' } })).status, 201);
  await callerWith(service, 'default', { username: 'riser', role: 'member' });
  t.is((await call(service, 'DELETE', '/spaces/promoted', { as: riser })).status, 403);
});

test('bodies: non-JSON, malformed, not an object, unknown field, wrong types are 400 naming the field', async (t) => {
  const cases: Array<[string, string | undefined, string]> = [
    ['name=x', 'application/x-www-form-urlencoded', 'request body must be JSON (Content-Type: application/json)'],
    ['name', 'text/plain', 'request body must be JSON (Content-Type: application/json)'],
    ['{"name":"ok"}', 'text/plain', 'request body must be JSON (Content-Type: application/json)'],
    ['', undefined, 'body: must be a JSON object'],
    ['{"name":', 'application/json', 'malformed JSON body'],
    ['["x"]', 'application/json', 'body: must be a JSON object'],
    ['null', 'application/json', 'body: must be a JSON object'],
    ['"x"', 'application/json', 'body: must be a JSON object'],
    ['{"name":"ok","owner":"me"}', 'application/json', 'body: unknown field: owner'],
    ['{"name":null}', 'application/json', 'body.name: must be a string'],
    ['{"schemas":[]}', 'application/json', 'body.name: is required'],
    ['{"name":"ok","schemas":null}', 'application/json', 'body.schemas: must be an array of strings'],
    ['{"name":"ok","schemas":["a","a"]}', 'application/json', 'body.schemas[1]: repeats "a"'],
    ['{"name":"ok","schemas":["a\\u0000"]}', 'application/json', 'body.schemas[0]: must not contain NUL or unpaired surrogates'],
    ['{"name":"ok","schemas":["\\ud800"]}', 'application/json', 'body.schemas[0]: must not contain NUL or unpaired surrogates'],
    ['{"name":"-ok"}', 'application/json', 'body.name: may hold only letters, digits, space, "_", "." and "-", and must start with a letter or digit'],
    ['{"__proto__":{"x":1},"name":"ok"}', 'application/json', 'request body must not hold a "__proto__" key'],
  ];
  for (const [raw, contentType, error] of cases) {
    const answer = await call(service, 'POST', '/spaces', { as: admin, raw: raw || undefined, contentType });
    t.deepEqual([answer.status, answer.body], [400, refusalOf(error)], raw);
  }
  t.is((await service.runtime.knex('spaces').where({ name: 'ok' })).length, 0);
});

test('a body over limits.jsonBytes is 413', async (t) => {
  const answer = await call(service, 'POST', '/spaces', { as: admin, json: { name: 'big', schemas: Array.from({ length: 800 }, (_, index) => `schema-${index}-${'x'.repeat(80)}`) } });
  t.deepEqual([answer.status, answer.body], [413, { error: 'request body too large' }]);
});

test('1000 schemas of 128 code points are accepted, 1001 are not', async (t) => {
  const tenant = await newTenant(service);
  const big = await startTestService(t, { expert: { spaces: { enabled: true } } });
  const tenantAdmin = await callerWith(big, tenant, { username: 'a', role: 'admin' });
  const schemas = Array.from({ length: 1000 }, (_, index) => `${index}`.padEnd(128, 'é'));
  const created = await call(big, 'POST', '/spaces', { as: tenantAdmin, json: { name: 'wide', schemas } });
  t.is(created.status, 201);
  t.deepEqual((created.body.data as Record<string, unknown>).schemas, schemas);
  const tooMany = await call(big, 'PUT', '/spaces/wide', { as: tenantAdmin, json: { schemas: [...schemas, 'one more'] } });
  t.deepEqual([tooMany.status, tooMany.body], [400, schemaRefusal('body.schemas: must have at most 1000 entries')]);
});

test('check order: body (400) before existence (404) and conflict (409)', async (t) => {
  await call(service, 'POST', '/spaces', { as: admin, json: { name: 'taken' } });
  const conflictWithBadBody = await call(service, 'POST', '/spaces', { as: admin, json: { name: 'taken', schemas: [1] } });
  t.deepEqual([conflictWithBadBody.status, conflictWithBadBody.body], [400, schemaRefusal('body.schemas[0]: must be a string')]);
  const absentWithBadBody = await call(service, 'PUT', '/spaces/absent', { as: admin, json: { schemas: 'x' } });
  t.deepEqual([absentWithBadBody.status, absentWithBadBody.body], [400, schemaRefusal('body.schemas: must be an array of strings')]);
});

test('check order: tenant (400) before everything', async (t) => {
  for (const tenant of ['bad tenant!', 'no-such-tenant']) {
    const answer = await call(service, 'POST', '/spaces', { as: { tenant, token: admin.token }, raw: '{' });
    t.is(answer.status, 400, tenant);
  }
});

test('a token of another tenant is 401', async (t) => {
  const tenant = await newTenant(service);
  const answer = await call(service, 'GET', '/spaces', { as: { tenant, token: admin.token } });
  t.is(answer.status, 401);
});

test('spaces are confined to their tenant', async (t) => {
  const tenant = await newTenant(service);
  const otherAdmin = await callerWith(service, tenant, { username: 'other', role: 'admin' });
  t.is((await call(service, 'POST', '/spaces', { as: admin, json: { name: 'shared-name', schemas: ['home'] } })).status, 201);
  t.is((await call(service, 'POST', '/spaces', { as: otherAdmin, json: { name: 'shared-name', schemas: ['away'] } })).status, 201);
  t.is((await call(service, 'POST', '/spaces', { as: admin, json: { name: 'home-only' } })).status, 201);
  t.deepEqual(listedNames(await call(service, 'GET', '/spaces', { as: otherAdmin })), ['shared-name']);
  t.like((await call(service, 'GET', '/spaces/shared-name', { as: otherAdmin })).body, { data: { schemas: ['away'] } });
  t.is((await call(service, 'GET', '/spaces/home-only', { as: otherAdmin })).status, 404);
  t.is((await call(service, 'PUT', '/spaces/home-only', { as: otherAdmin, json: { schemas: [] } })).status, 404);
  t.is((await call(service, 'DELETE', '/spaces/home-only', { as: otherAdmin })).status, 404);
  t.like((await call(service, 'DELETE', '/spaces/shared-name', { as: otherAdmin })).body, { data: { schemas: ['away'] } });
  t.like((await call(service, 'GET', '/spaces/shared-name', { as: admin })).body, { data: { schemas: ['home'] } });
  t.is((await call(service, 'GET', '/spaces/home-only', { as: admin })).status, 200);
});

test('a known path with another method is 405 with Allow', async (t) => {
  const answer = await call(service, 'PATCH', '/spaces/x', { as: admin });
  t.is(answer.status, 405);
  t.deepEqual(answer.headers.get('allow')?.split(', ').sort(), ['DELETE', 'GET', 'HEAD', 'PUT']);
});

test('paths outside /spaces pass on', async (t) => {
  for (const path of ['/spacesX', '/space', '/api/spaces']) {
    const answer = await call(service, 'GET', path, { as: admin });
    t.deepEqual([answer.status, answer.body], [404, { error: 'Not Found' }], path);
  }
});

test('feature off (the default): every /spaces call is 404, even without a token', async (t) => {
  const off = await startTestService(t);
  const offAdmin = await callerWith(off, 'default', { username: 'off-admin', role: 'admin' });
  const calls: Array<[string, string]> = [['GET', '/spaces'], ['GET', '/spaces/x'], ['POST', '/spaces'], ['PUT', '/spaces/x'], ['DELETE', '/spaces/x'], ['PATCH', '/spaces'], ['GET', '/spaces/x/y']];
  for (const [method, path] of calls) {
    for (const as of [undefined, offAdmin]) {
      const answer = await call(off, method, path, { as, raw: method === 'POST' ? '{"name":"x"}' : undefined, contentType: 'application/json' });
      t.deepEqual([answer.status, answer.body], [404, DISABLED], `${method} ${path} ${as ? 'with' : 'without'} a token`);
    }
  }
  const badTenant = await call(off, 'GET', '/spaces', { as: { tenant: 'nobody' } });
  t.deepEqual([badTenant.status, badTenant.body], [400, { error: 'unknown tenant' }]);
  t.is((await off.runtime.knex('spaces').where({ name: 'x' })).length, 0);
});

test('feature switch: the same data answers once the feature is turned on', async (t) => {
  const tenant = await newTenant(service);
  await service.runtime.knex('spaces').insert({ tenant, name: 'preexisting', schemas: ['s'] });
  const caller = await callerWith(service, tenant, { username: 'u', role: 'admin' });
  const off = await startTestService(t, { expert: { spaces: { enabled: false } } });
  t.deepEqual((await call(off, 'GET', '/spaces', { as: caller })).body, DISABLED);
  t.deepEqual(listedNames(await call(service, 'GET', '/spaces', { as: caller })), ['preexisting']);
});

test('the spaces migration runs down and up again', async (t) => {
  const knex = await freshKnex(t);
  await migrateLatest(knex);
  const key = await knex.raw(
    `select array_agg(a.attname::text order by k.ordinality) as columns
       from pg_index i cross join unnest(i.indkey) with ordinality as k(attnum, ordinality)
       join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
      where i.indrelid = 'spaces'::regclass and i.indisprimary`,
  );
  t.deepEqual(key.rows[0].columns, ['tenant', 'name']);
  const reverted = await rollbackLast(knex, true);
  t.true(reverted.includes('20261122000003_spaces.ts'));
  t.false(await knex.schema.hasTable('spaces'));
  await migrateLatest(knex);
  t.true(await knex.schema.hasTable('spaces'));
});
