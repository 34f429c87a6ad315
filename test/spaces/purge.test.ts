import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { startTrashSweeper } from '../../lib/spaces/index.ts';
import { call, callerWith, newTenant, spacePath } from '../helpers/spaces.ts';
import { serviceForFile, startTestService, testDatabaseUrl, type ServiceUnderTest } from '../helpers/service.ts';
import { testTenantDatabase } from '../helpers/database.ts';

let service: ServiceUnderTest;

serviceForFile({ expert: { spaces: { enabled: true } } }, (started) => {
  service = started;
});

const TRASH_DAYS = 30;
const LONG_AGO = () => new Date(Date.now() - (TRASH_DAYS + 1) * 86_400_000);
const LATELY = () => new Date(Date.now() - (TRASH_DAYS - 1) * 86_400_000);

/** Trashed spaces written as the service would leave them, `deletedAt` set in the past: no test waits days. */
async function trashed(tenant: string, names: string[], deletedAt: Date): Promise<void> {
  if (names.length === 0) return;
  await service.runtime.knex('spaces').insert(names.map((name) => ({ tenant, name, schemas: [`of-${name}`], deleted_at: deletedAt })));
}

async function purgedEvents(tenant: string): Promise<Array<Record<string, unknown>>> {
  return service.runtime.knex('space_events').where({ tenant, action: 'purged' }).select('space', 'actor_uid', 'request_id', 'request_id_from_caller', 'before', 'after');
}

const names = (prefix: string, count: number) => Array.from({ length: count }, (_, index) => `${prefix}-${index}`);

test.serial('sweepers of two instances at once: each expired space purged once, with one purged event; the rest untouched', async (t) => {
  const url = await testDatabaseUrl();
  const pools = [testTenantDatabase(url), testTenantDatabase(url)];
  t.teardown(() => Promise.all(pools.map((pool) => pool.close())));
  // Two sweepers on each pool: four sweeps racing over the same tenants.
  const sweepers = pools.flatMap((database) => [0, 1].map(() => startTrashSweeper({ database, trashDays: TRASH_DAYS, intervalMs: 3_600_000, logger: service.runtime.logger })));
  t.teardown(() => Promise.all(sweepers.map((sweeper) => sweeper.stop())));
  for (let round = 0; round < 3; round += 1) {
    // One tenant with more than a purge transaction takes, to cross batches while racing.
    const tenants = [await newTenant(service), await newTenant(service), await newTenant(service)];
    const expiredCounts = [230, 12, 0];
    for (const [index, tenant] of tenants.entries()) {
      await trashed(tenant, names('old', expiredCounts[index] ?? 0), LONG_AGO());
      await trashed(tenant, names('recent', 3), LATELY());
      await service.runtime.knex('spaces').insert({ tenant, name: 'live', schemas: [] });
    }
    const counts = await Promise.all(sweepers.map((sweeper) => sweeper.sweep()));
    t.is(counts.reduce((sum, count) => sum + count, 0), 242, `round ${round}: ${counts.join(',')}`);
    t.log(`round ${round}: purged by each sweeper ${counts.join(', ')}`);
    for (const [index, tenant] of tenants.entries()) {
      const events = await purgedEvents(tenant);
      const expected = names('old', expiredCounts[index] ?? 0).sort();
      t.deepEqual(events.map((event) => event.space).sort(), expected, `round ${round}, ${tenant}: one purged event per expired space`);
      for (const event of events) t.deepEqual(event, { space: event.space, actor_uid: null, request_id: '', request_id_from_caller: null, before: { schemas: [`of-${event.space}`] }, after: null });
      const left = await service.runtime.knex('spaces').where({ tenant }).orderBy('name').pluck('name');
      t.deepEqual(left, ['live', ...names('recent', 3)], `round ${round}, ${tenant}: no expired row left`);
    }
  }
});

test('an expired space not yet swept is already out of the trash: not listed, not restorable; a create of its name purges it', async (t) => {
  const tenant = await newTenant(service);
  const admin = await callerWith(service, tenant, { username: 'root', role: 'admin' });
  await trashed(tenant, ['stale', 'fresh'], LONG_AGO());
  await service.runtime.knex('spaces').where({ tenant, name: 'fresh' }).update({ deleted_at: LATELY() });
  t.deepEqual(((await call(service, 'GET', '/spaces?trashed=true', { as: admin })).body.data as Array<{ name: string }>).map((space) => space.name), ['fresh']);
  t.is((await call(service, 'POST', `${spacePath('stale')}/restore`, { as: admin })).status, 404);
  t.is((await call(service, 'POST', '/spaces', { as: admin, json: { name: 'stale' } })).status, 201);
  t.deepEqual((await purgedEvents(tenant)).map((event) => event.space), ['stale']);
});

test.serial('each instance purges on its own timer, without any request, and stops when the service closes', async (t) => {
  const tenant = await newTenant(service);
  const sweeping = await startTestService(undefined, { expert: { spaces: { enabled: true, purgeIntervalMs: 1000 } } });
  let closed = false;
  t.teardown(() => (closed ? undefined : sweeping.close()));
  await trashed(tenant, ['expired'], LONG_AGO());
  const deadline = Date.now() + 30_000;
  while ((await purgedEvents(tenant)).length === 0 && Date.now() < deadline) await sleep(200);
  t.deepEqual(
    (await purgedEvents(tenant)).map(({ space, actor_uid, request_id, request_id_from_caller }) => ({ space, actor_uid, request_id, request_id_from_caller })),
    [{ space: 'expired', actor_uid: null, request_id: '', request_id_from_caller: null }],
    'no request: no actor, no request id, no source of one',
  );
  t.is(await service.runtime.knex('spaces').where({ tenant }).count({ n: '*' }).first().then((row) => Number(row?.n)), 0);
  await sweeping.close();
  closed = true;
  await trashed(tenant, ['after-close'], LONG_AGO());
  await sleep(2500);
  t.deepEqual(await service.runtime.knex('spaces').where({ tenant }).pluck('name'), ['after-close']);
  t.false(sweeping.logText().includes('purge of trashed spaces failed'));
});

test.serial('a stop during a sweep lets the transaction under way commit, and no more: every purged space has its event', async (t) => {
  const tenant = await newTenant(service);
  await trashed(tenant, names('old', 1500), LONG_AGO());
  const database = testTenantDatabase(await testDatabaseUrl());
  t.teardown(() => database.close());
  const sweeper = startTrashSweeper({ database, trashDays: TRASH_DAYS, intervalMs: 3_600_000, logger: service.runtime.logger });
  const sweeping = sweeper.sweep();
  // Stopped once the first transaction has committed, while later ones are on their way.
  while ((await purgedEvents(tenant)).length === 0) await sleep(5);
  await sweeper.stop();
  // The sweep goes through every tenant: spaces left expired by the tests before count in its total.
  const purgedEverywhere = await sweeping;
  const purged = (await purgedEvents(tenant)).length;
  const left = Number((await service.runtime.knex('spaces').where({ tenant }).count({ n: '*' }).first())?.n);
  t.is(left, 1500 - purged);
  t.true(purgedEverywhere >= purged);
  t.true(purged % 100 === 0 || purged === 1500, `purged ${purged}`);
  t.log(`purged ${purged} of 1500 before the stop took effect`);
});
