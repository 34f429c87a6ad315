import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import pg from 'pg';
import { describeBlockers, type LockAttempt, type LockRetry, LockNotAvailableError, withLockRetries } from '../../lib/db/lock-retries.ts';
import { migrateLatest, migrationStatus, rollbackLast } from '../../lib/db/migrations.ts';
import { freshKnex, migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';
import { migrationFolder, sqlMigration } from '../helpers/migrations.ts';

/**
 * DDL behind a long read (SPEC §18.2): the migration asks for its lock under a short
 * `lock_timeout` and asks again after a pause, so the statements arriving meanwhile wait one
 * attempt at most instead of queueing behind the DDL for as long as the read lasts; a lock that
 * never comes fails naming the backend that holds it.
 */

let database: MigratedDatabase;

test.before(async () => {
  database = await migratedDatabase(['acme']);
});
test.after.always(async () => {
  await database?.close();
});

const ADD_COLUMN = sqlMigration(['alter table documents add column if not exists lock_test text'], ['alter table documents drop column if exists lock_test']);
const READ = 'select count(*) from documents /* the long read */';

/** A session that has read `documents` in a transaction it keeps open: it holds ACCESS SHARE until `release`. */
async function holdRead(url: string): Promise<{ pid: number; release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url, application_name: 'long-report' });
  client.on('error', () => {});
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  await client.query('begin');
  await client.query(READ);
  return {
    pid: rows[0]?.pid ?? 0,
    release: async () => {
      await client.query('commit');
      await client.end();
    },
  };
}

/** Writes and reads documents one statement after another until stopped; resolves with the longest statement, in ms. */
function traffic(url: string): { stop(): Promise<number> } {
  let running = true;
  const done = (async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    let longest = 0;
    for (let sequence = 0; running; sequence++) {
      const started = performance.now();
      await client.query("insert into documents (tenant, collection, id, doc) values ('acme', 'traffic', $1, '{}') on conflict do nothing", [`t${sequence}`]);
      await client.query("select doc from documents where tenant = 'acme' and collection = 'traffic' and id = $1", [`t${sequence}`]);
      longest = Math.max(longest, performance.now() - started);
      await sleep(10);
    }
    await client.end();
    return longest;
  })();
  return {
    stop: async () => {
      running = false;
      return done;
    },
  };
}

async function columnExists(): Promise<boolean> {
  const { rows } = await database.knex.raw("select from information_schema.columns where table_name = 'documents' and column_name = 'lock_test'");
  return rows.length > 0;
}

test.serial('a migration behind a long read retries, the traffic meanwhile waits one attempt at most, and it applies once the read ends', async (t) => {
  t.teardown(forgetLockTest);
  const directory = migrationFolder(t, { expand: { '29990101000001_lock_test.ts': ADD_COLUMN } });
  const reader = await holdRead(database.url);
  const load = traffic(database.url);
  const retries: LockRetry[] = [];
  const started = performance.now();
  const migrating = migrateLatest(database.knex, { directory, onRetry: (retry) => retries.push(retry) });
  // Three retries take about a second and a half; a loaded machine takes longer.
  while (retries.length < 3 && performance.now() - started < 30_000) await sleep(50);
  await sleep(500);
  await reader.release();
  const applied = await migrating;
  const longest = await load.stop();
  t.log(`applied after ${Math.round(performance.now() - started)} ms and ${retries.length + 1} attempts; the longest statement of the traffic took ${Math.round(longest)} ms`);
  t.deepEqual(applied, ['29990101000001_lock_test.ts']);
  t.true(await columnExists());
  t.true(retries.length >= 3, `${retries.length} retries`);
  t.true(longest < 1000, `the traffic waited ${Math.round(longest)} ms behind the migration`);
  // Each look for the blocker is one query every 40 ms during a wait of 100 ms: on a loaded
  // machine some retries are told of none, never of another.
  t.deepEqual([...new Set(retries.flatMap((retry) => retry.blockers.map((each) => each.pid)))], [reader.pid]);
  const blocker = retries.findLast((retry) => retry.blockers.length > 0)?.blockers[0];
  t.is(blocker?.pid, reader.pid);
  t.is(blocker?.application, 'long-report');
  t.is(blocker?.state, 'idle in transaction');
  t.is(blocker?.query, READ);
  t.is(blocker?.wanted, 'documents (AccessExclusiveLock)');
});

test.serial('without lock_timeout (as before), the same migration holds every statement on the table for as long as the read lasts', async (t) => {
  const directory = migrationFolder(t, { expand: { '29990101000001_lock_test.ts': ADD_COLUMN } });
  t.teardown(forgetLockTest);
  const reader = await holdRead(database.url);
  const load = traffic(database.url);
  const migrating = migrateLatest(database.knex, { directory, attempts: [{ lockTimeoutMs: 0, pauseMs: 0 }] });
  // From when its lock is asked for: a loaded machine takes a while to get the migration there.
  const asked = performance.now() + 30_000;
  while (!(await accessExclusiveAwaited()) && performance.now() < asked) await sleep(50);
  await sleep(3000);
  await reader.release();
  await migrating;
  const longest = await load.stop();
  t.log(`the longest statement of the traffic took ${Math.round(longest)} ms`);
  t.true(longest > 2000, `the traffic waited ${Math.round(longest)} ms`);
});

/** Whether a session waits for ACCESS EXCLUSIVE on `documents` (the migration's `alter table`). */
async function accessExclusiveAwaited(): Promise<boolean> {
  const { rows } = await database.knex.raw("select from pg_locks where relation = 'documents'::regclass and mode = 'AccessExclusiveLock' and not granted");
  return rows.length > 0;
}

/** The lock test's column and its migration's record gone, whatever the test did. */
async function forgetLockTest(): Promise<void> {
  await database.knex.raw('alter table documents drop column if exists lock_test');
  await database.knex('knex_migrations').where({ name: '29990101000001_lock_test.ts' }).delete();
}

const FEW: LockAttempt[] = Array.from({ length: 3 }, () => ({ lockTimeoutMs: 150, pauseMs: 50 }));

test.serial('a lock that never comes fails the migration, naming the backend that holds it, and leaves it pending', async (t) => {
  const directory = migrationFolder(t, { expand: { '29990101000001_lock_test.ts': ADD_COLUMN } });
  const reader = await holdRead(database.url);
  t.teardown(() => reader.release().catch(() => undefined));
  const error = await t.throwsAsync(migrateLatest(database.knex, { directory, attempts: FEW }), { instanceOf: LockNotAvailableError });
  t.log(error?.message);
  t.regex(error?.message ?? '', /^migration 29990101000001_lock_test\.ts could not take its lock in 3 attempts over \d+ s: /);
  t.true(error?.message.includes(`the lock on documents (AccessExclusiveLock) is held by pid ${reader.pid} (postgres, application "long-report", idle in transaction for`));
  t.true(error?.message.includes(`: ${READ}`));
  t.false(await columnExists());
  const state = (await migrationStatus(database.knex, { directory })).find((entry) => entry.name === '29990101000001_lock_test.ts');
  t.is(state?.applied, false);
});

test.serial('withLockRetries runs its work again from the start after a lock timeout, and gives the blocker once the attempts are spent', async (t) => {
  const reader = await holdRead(database.url);
  t.teardown(() => reader.release().catch(() => undefined));
  let runs = 0;
  const work = async (trx: import('knex').Knex.Transaction) => {
    runs++;
    await trx.raw('lock table documents in access exclusive mode');
  };
  const failing = withLockRetries(database.knex, work, { attempts: FEW, label: 'locking documents' });
  const error = await t.throwsAsync(failing, { instanceOf: LockNotAvailableError });
  t.is(runs, 3);
  t.deepEqual(
    error?.blockers.map((blocker) => blocker.pid),
    [reader.pid],
  );
  const succeeding = withLockRetries(database.knex, work, { attempts: Array.from({ length: 40 }, () => ({ lockTimeoutMs: 150, pauseMs: 50 })) });
  await sleep(500);
  await reader.release();
  await t.notThrowsAsync(succeeding);
  t.true(runs > 4);
});

/** A migration for a run to wait with: the lock is taken only when something is pending. */
const PENDING = { '29990101000009_nothing_much.ts': sqlMigration(['select 1']) };

/** Another session holding the migration lock (another make migrate, an instance migrating at start-up) until `release`. */
async function holdMigrationLock(url: string): Promise<{ pid: number; release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url, application_name: 'other-migrate' });
  client.on('error', () => {});
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid, pg_advisory_lock(7361504201)');
  return { pid: rows[0]?.pid ?? 0, release: () => client.end() };
}

test.serial('a run waiting for the migration lock reports its holder on each attempt in vain, and fails after the last naming it', async (t) => {
  const holder = await holdMigrationLock(database.url);
  t.teardown(() => holder.release().catch(() => undefined));
  const retries: LockRetry[] = [];
  const directory = migrationFolder(t, { expand: PENDING });
  const error = await t.throwsAsync(migrateLatest(database.knex, { directory, attempts: FEW, onRetry: (retry) => retries.push(retry) }), { instanceOf: LockNotAvailableError });
  t.log(error?.message);
  t.deepEqual(
    retries.map((retry) => [retry.label, retry.attempt, retry.blockers.map((blocker) => [blocker.pid, blocker.application])]),
    [1, 2].map((attempt) => ['the migration runner', attempt, [[holder.pid, 'other-migrate']]]),
  );
  t.true(describeBlockers(retries[0]?.blockers ?? []).startsWith(`the lock on advisory lock 7361504201 (ExclusiveLock) is held by pid ${holder.pid} (postgres, application "other-migrate", idle for`), 'make migrate\'s line');
  t.regex(error?.message ?? '', /^the migration runner could not take its lock in 3 attempts over \d+ s: the lock on advisory lock 7361504201 \(ExclusiveLock\) is held by pid \d+ \(postgres, application "other-migrate", idle for \d+ s\): .*\(end it with select pg_terminate_backend\(pid\), or try again once it is done\)$/);
});

test.serial('a run waiting for the migration lock goes on once its holder lets it go within the attempts', async (t) => {
  const holder = await holdMigrationLock(database.url);
  t.teardown(() => holder.release().catch(() => undefined));
  const retries: LockRetry[] = [];
  const attempts = Array.from({ length: 40 }, () => ({ lockTimeoutMs: 150, pauseMs: 50 }));
  const directory = migrationFolder(t, { expand: PENDING });
  const waiting = migrateLatest(database.knex, { directory, attempts, onRetry: (retry) => retries.push(retry) });
  await sleep(600);
  await holder.release();
  t.deepEqual(await waiting, Object.keys(PENDING), 'it ran');
  t.true(retries.length > 0 && retries.length < attempts.length);
  await rollbackLast(database.knex, false, { directory });
});

test.serial('a run with nothing to migrate (an instance restarting during a long index build of another run) does not wait for the migration lock', async (t) => {
  const holder = await holdMigrationLock(database.url);
  t.teardown(() => holder.release().catch(() => undefined));
  const retries: LockRetry[] = [];
  t.deepEqual(await migrateLatest(database.knex, { attempts: FEW, onRetry: (retry) => retries.push(retry) }), []);
  t.deepEqual(retries, []);
});

test('a run waiting for another run names it as the migration runner, not as an unnamed session running a query of pg_locks', async (t) => {
  const knex = await freshKnex(t);
  await migrateLatest(knex);
  const directory = migrationFolder(t, { expand: { '29990101000001_slow.ts': sqlMigration(['select pg_sleep(1.5)']) } });
  const first = migrateLatest(knex, { directory });
  await sleep(300);
  const retries: LockRetry[] = [];
  const attempts = Array.from({ length: 40 }, () => ({ lockTimeoutMs: 100, pauseMs: 100 }));
  t.deepEqual(await migrateLatest(knex, { directory, attempts, onRetry: (retry) => retries.push(retry) }), []);
  t.deepEqual(await first, ['29990101000001_slow.ts']);
  const named = retries.flatMap((retry) => retry.blockers).map((blocker) => blocker.application);
  t.true(named.length > 0);
  t.true(named.every((application) => application === 'spaceport migration runner'), JSON.stringify(named));
});
