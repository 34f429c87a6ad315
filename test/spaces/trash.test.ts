import test from 'ava';
import { migrateLatest } from '../../lib/db/migrations.ts';
import * as trashMigration from '../../migrations/20261126000007_space_trash.ts';
import { freshKnex } from '../helpers/database.ts';
import { schemaRefusal } from '../helpers/refusals.ts';
import { call, callerWith, listedNames, newTenant, spacePath, type Caller, type CallResult } from '../helpers/spaces.ts';
import { serviceForFile, startTestService, type ServiceUnderTest } from '../helpers/service.ts';

let service: ServiceUnderTest;
let tenant: string;
let admin: Caller;
let member: Caller;

serviceForFile({ expert: { spaces: { enabled: true } } }, async (started) => {
  service = started;
  tenant = await newTenant(service);
  admin = await callerWith(service, tenant, { username: 'root', role: 'admin' });
  member = await callerWith(service, tenant, { username: 'mia', role: 'member', schemas: ['*'] });
});

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const create = (name: string, schemas: string[] = [], as: Caller = admin) => call(service, 'POST', '/spaces', { as, json: { name, schemas } });
const remove = (name: string, as: Caller = admin) => call(service, 'DELETE', spacePath(name), { as });
const restore = (name: string, as: Caller = admin) => call(service, 'POST', `${spacePath(name)}/restore`, { as });
const trash = (as: Caller = admin) => call(service, 'GET', '/spaces?trashed=true', { as });
const actions = async (name: string): Promise<string[]> =>
  ((await call(service, 'GET', `${spacePath(name)}/history`, { as: admin })).body.data as Array<{ action: string }>).map((event) => event.action).reverse();

function statusAndBody(answer: CallResult): [number, unknown] {
  return [answer.status, answer.body];
}

test('DELETE answers the space as before, and the trashed space is invisible to every call but its history', async (t) => {
  const created = await create('binned', ['a']);
  const deleted = await remove('binned');
  t.deepEqual(statusAndBody(deleted), [200, created.body]);
  t.is(deleted.headers.get('etag'), created.headers.get('etag'));
  t.false(listedNames(await call(service, 'GET', '/spaces', { as: admin })).includes('binned'));
  t.false(listedNames(await call(service, 'GET', '/spaces?trashed=false', { as: admin })).includes('binned'));
  const notFound = [404, { error: 'space not found' }];
  t.deepEqual(statusAndBody(await call(service, 'GET', spacePath('binned'), { as: admin })), notFound);
  t.deepEqual(statusAndBody(await call(service, 'PUT', spacePath('binned'), { as: admin, json: { schemas: [] } })), notFound);
  t.deepEqual(statusAndBody(await call(service, 'DELETE', spacePath('binned'), { as: admin, headers: { 'If-Match': '*' } })), notFound);
  t.deepEqual(await actions('binned'), ['created', 'deleted']);
});

test('GET /spaces?trashed=true lists the trash with deletedAt, sorted by name, for admins only', async (t) => {
  const own = await newTenant(service);
  const ownAdmin = await callerWith(service, own, { username: 'root', role: 'admin' });
  const ownMember = await callerWith(service, own, { username: 'mia', role: 'member', schemas: ['*'] });
  for (const name of ['b', 'a', 'B', 'kept']) await create(name, ['s'], ownAdmin);
  const before = Date.now();
  for (const name of ['b', 'a', 'B']) await remove(name, ownAdmin);
  const listed = await trash(ownAdmin);
  t.is(listed.status, 200);
  t.is(listed.body.total, 3);
  const data = listed.body.data as Array<Record<string, unknown>>;
  t.deepEqual(listedNames(listed), ['B', 'a', 'b']);
  for (const space of data) {
    t.deepEqual(Object.keys(space).sort(), ['createdAt', 'deletedAt', 'name', 'schemas', 'updatedAt']);
    t.deepEqual(space.schemas, ['s']);
    t.regex(space.deletedAt as string, ISO_UTC);
    t.true(Date.parse(space.deletedAt as string) >= before - 1000);
  }
  t.deepEqual(statusAndBody(await trash(ownMember)), [403, { error: 'admin role required' }]);
  t.deepEqual(listedNames(await call(service, 'GET', '/spaces?trashed=false', { as: ownMember })), ['kept']);
  for (const query of ['trashed=yes', 'trashed=']) {
    t.deepEqual(statusAndBody(await call(service, 'GET', `/spaces?${query}`, { as: ownAdmin })), [400, schemaRefusal('query.trashed: must be "true" or "false"')], query);
  }
});

test('restore brings the space back as it was, with its ETag and a restored event; 404 when not in the trash, 409 when live, each saying so', async (t) => {
  const created = await create('undone', ['x', 'y']);
  await remove('undone');
  const restored = await restore('undone');
  t.deepEqual(statusAndBody(restored), [200, created.body]);
  t.is(restored.headers.get('etag'), created.headers.get('etag'));
  t.deepEqual(statusAndBody(await call(service, 'GET', spacePath('undone'), { as: admin })), [200, created.body]);
  t.false(listedNames(await trash()).includes('undone'));
  const history = (await call(service, 'GET', `${spacePath('undone')}/history`, { as: admin })).body.data as Array<Record<string, unknown>>;
  t.like(history[0], { action: 'restored', actor: { uid: admin.uid, username: 'root' }, before: null, after: { schemas: ['x', 'y'] }, requestId: restored.headers.get('x-request-id') });
  t.deepEqual(statusAndBody(await restore('undone')), [409, { error: 'a live space has this name; only a deleted space can be restored' }]);
  for (const name of ['never-was', 'a/b', 'x'.repeat(65)]) t.deepEqual(statusAndBody(await restore(name)), [404, { error: 'no space of this name is in the trash (GET /spaces?trashed=true lists it)' }], name);
  t.deepEqual(statusAndBody(await restore('undone', member)), [403, { error: 'admin role required' }]);
});

test('creating a name in the trash is allowed and purges the trashed copy; its history stays', async (t) => {
  await create('reborn', ['old']);
  await remove('reborn');
  const created = await create('reborn', ['new']);
  t.is(created.status, 201);
  t.deepEqual((created.body.data as { schemas: string[] }).schemas, ['new']);
  t.deepEqual(statusAndBody(await restore('reborn')), [409, { error: 'a live space has this name; only a deleted space can be restored' }]);
  t.false(listedNames(await trash()).includes('reborn'));
  t.deepEqual(await actions('reborn'), ['created', 'deleted', 'purged', 'created']);
  const purged = ((await call(service, 'GET', `${spacePath('reborn')}/history`, { as: admin })).body.data as Array<Record<string, unknown>>)[1];
  t.like(purged, { action: 'purged', before: { schemas: ['old'] }, after: null, requestId: created.headers.get('x-request-id') });
  await remove('reborn');
  t.deepEqual(statusAndBody(await restore('reborn')), [200, created.body]);
});

test('a spaces list naming only trashed spaces grants nothing, never all; a restore grants again', async (t) => {
  const own = await newTenant(service);
  const ownAdmin = await callerWith(service, own, { username: 'root', role: 'admin' });
  for (const name of ['listed', 'other']) await create(name, [], ownAdmin);
  const limited = await callerWith(service, own, { username: 'lim', role: 'member', spaces: ['listed'], schemas: ['*'] });
  t.deepEqual(listedNames(await call(service, 'GET', '/spaces', { as: limited })), ['listed']);
  await remove('listed', ownAdmin);
  t.deepEqual(listedNames(await call(service, 'GET', '/spaces', { as: limited })), []);
  t.is((await call(service, 'GET', spacePath('listed'), { as: limited })).status, 404);
  t.is((await call(service, 'GET', spacePath('other'), { as: limited })).status, 404);
  await restore('listed', ownAdmin);
  t.deepEqual(listedNames(await call(service, 'GET', '/spaces', { as: limited })), ['listed']);
});

test('a restore racing creates of the same name ends with exactly one live space, every time', async (t) => {
  const winners = { restore: 0, create: 0 };
  for (let round = 0; round < 10; round += 1) {
    await create('contested', ['first']);
    await remove('contested');
    const attempts = Array.from({ length: 8 }, (_, index) => (index % 2 === 0 ? restore('contested') : create('contested', [`round-${round}`])));
    const answers = await Promise.all(attempts);
    const statuses = answers.map((answer) => answer.status);
    t.is(statuses.filter((status) => status === 200 || status === 201).length, 1, `round ${round}: ${statuses.join(',')}`);
    t.true(statuses.every((status) => [200, 201, 404, 409].includes(status)), statuses.join(','));
    const rows = await service.runtime.knex('spaces').where({ tenant, name: 'contested' }).select('schemas', 'deleted_at');
    t.is(rows.length, 1);
    t.is(rows[0].deleted_at, null);
    const winner = answers.find((answer) => answer.status === 200 || answer.status === 201);
    winners[winner?.status === 200 ? 'restore' : 'create'] += 1;
    t.deepEqual(rows[0].schemas, (winner?.body.data as { schemas: string[] } | undefined)?.schemas);
    await remove('contested');
    await create('contested', ['reset']);
    await remove('contested');
    await service.runtime.knex('spaces').where({ tenant, name: 'contested' }).delete();
  }
  t.log(`won by a restore ${winners.restore} times, by a create ${winners.create} times`);
  const events = await service.runtime.knex('space_events').where({ tenant, space: 'contested' }).select('action');
  t.is(events.filter((event) => event.action === 'restored').length + events.filter((event) => event.action === 'purged').length, 20, 'each round: one restore or one purge by its create, and the reset purge');
});

test('spaces.trashDays 0 deletes at once: no trash, nothing to restore', async (t) => {
  const immediate = await startTestService(t, { expert: { spaces: { enabled: true, trashDays: 0 } } });
  const own = await newTenant(immediate);
  const ownAdmin = await callerWith(immediate, own, { username: 'root', role: 'admin' });
  const created = await call(immediate, 'POST', '/spaces', { as: ownAdmin, json: { name: 'gone' } });
  t.deepEqual(statusAndBody(await call(immediate, 'DELETE', spacePath('gone'), { as: ownAdmin })), [200, created.body]);
  t.is(await immediate.runtime.knex('spaces').where({ tenant: own }).count({ n: '*' }).first().then((row) => Number(row?.n)), 0);
  t.deepEqual((await call(immediate, 'GET', '/spaces?trashed=true', { as: ownAdmin })).body, { success: true, data: [], total: 0 });
  t.is((await call(immediate, 'POST', `${spacePath('gone')}/restore`, { as: ownAdmin })).status, 404);
});

test('20 parallel creates of a name in the trash: exactly one 201, nineteen 409, one purge of the trashed copy', async (t) => {
  await create('crowded', ['old']);
  await remove('crowded');
  const statuses = (await Promise.all(Array.from({ length: 20 }, (_, index) => create('crowded', [`s${index}`])))).map((answer) => answer.status);
  t.deepEqual(
    statuses.filter((status) => status === 201),
    [201],
  );
  t.is(statuses.filter((status) => status === 409).length, 19);
  t.deepEqual(await actions('crowded'), ['created', 'deleted', 'purged', 'created']);
  t.is(await service.runtime.knex('spaces').where({ tenant, name: 'crowded' }).count({ n: '*' }).first().then((row) => Number(row?.n)), 1);
});

test('the trash migration runs down and up again; down purges the trash rather than bring it back to life', async (t) => {
  const knex = await freshKnex(t);
  await migrateLatest(knex);
  await knex('tenants').insert({ name: 'acme' });
  await knex('spaces').insert([
    { tenant: 'acme', name: 'live', schemas: [] },
    { tenant: 'acme', name: 'binned', schemas: [], deleted_at: new Date() },
  ]);
  await knex.transaction((transaction) => trashMigration.down(transaction));
  t.false(await knex.schema.hasColumn('spaces', 'deleted_at'));
  t.deepEqual(await knex('spaces').pluck('name'), ['live']);
  await knex.transaction((transaction) => trashMigration.up(transaction));
  t.deepEqual(await knex('spaces').whereNull('deleted_at').pluck('name'), ['live']);
});
