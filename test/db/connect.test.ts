import { boundUnderLoad } from '../helpers/machine-load.ts';
import test from 'ava';
import { createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createRuntime } from '../../lib/server.ts';
import { scratchFolder } from '../helpers/scratch.ts';
import { isDatabaseUnreachable } from '../../lib/db/connect.ts';
import { migrateLatest } from '../../lib/db/migrations.ts';
import { documentStore } from '../../lib/documents/index.ts';
import { NO_TENANT, TenantDatabase } from '../../lib/db/tenant-database.ts';
import { createFreshDatabase, createMigratedDatabase, testKnex, testTenantDatabase } from '../helpers/database.ts';
import { startTestService } from '../helpers/service.ts';
import { undeclaredLeft } from '../../lib/documents/index-build.ts';
import { databaseProxy } from '../helpers/database-proxy.ts';

test('a BEGIN cut by the query time limit does not leave its connection in a transaction that swallows later writes', async (t) => {
  const database = await createFreshDatabase();
  const direct = testKnex(database.url);
  const proxy = await databaseProxy(database.url);
  const limited = new TenantDatabase(proxy.url, { queryTimeoutMs: 300 });
  const unlimited = testTenantDatabase(database.url);
  t.teardown(async () => {
    await limited.close();
    await unlimited.close();
    await proxy.close();
    await direct.destroy();
    await database.drop();
  });
  await migrateLatest(direct);
  const notes = documentStore(limited, 'default').collection('notes');
  await notes.insertOne({ _id: 'first' });

  proxy.freeze();
  const cut = await t.throwsAsync(notes.updateOne({ _id: 'first' }, { $set: { seen: true } }));
  t.true(isDatabaseUnreachable(cut), cut?.message);
  proxy.thaw();
  await new Promise((resolve) => setTimeout(resolve, 100));

  await notes.insertOne({ _id: 'second' });
  const seenElsewhere = await documentStore(unlimited, 'default').collection('notes').find().toArray();
  t.deepEqual(seenElsewhere.map((note) => note._id), ['first', 'second']);
  const stuck = await direct.raw("select count(*)::int as count from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'");
  t.is((stuck.rows as Array<{ count: number }>)[0]?.count, 0);
});

test('the messages pg gives for a server that went away or stopped answering count as unreachable', (t) => {
  for (const message of ['timeout expired', 'select 1 - Query read timeout', 'Connection terminated unexpectedly', 'timeout exceeded when trying to connect']) {
    t.true(isDatabaseUnreachable(new Error(message)), message);
  }
  for (const message of ['relation "x" does not exist', 'invalid input syntax for type json']) t.false(isDatabaseUnreachable(new Error(message)), message);
});

test('an answer that arrived while the service itself was stalled past the limit is taken, not cut', async (t) => {
  const database = await createFreshDatabase();
  const limited = testTenantDatabase(database.url, { queryTimeoutMs: 300 });
  t.teardown(async () => {
    await limited.close();
    await database.drop();
  });
  await limited.query('', { sql: 'select 1', bindings: [] });
  const answering = limited.query<{ answer: number }>('', { sql: 'select 42 as answer from pg_sleep(0.05)', bindings: [] });
  // PostgreSQL answers within milliseconds, but this process reads nothing while it is busy (here
  // in a setImmediate callback): when it is free again, the event loop runs due timers, the
  // limit's check among them, before it reads the answer waiting on the socket.
  await new Promise<void>((resolve) =>
    setTimeout(
      () =>
        setImmediate(() => {
          const busyUntil = performance.now() + 900;
          while (performance.now() < busyUntil);
          resolve();
        }),
      10,
    ),
  );
  const { rows } = await answering;
  t.deepEqual(rows, [{ answer: 42 }]);
});

test('a TenantDatabase waits connectTimeoutMs for a connection (DATABASE_CONNECT_TIMEOUT_MS), not a fixed 1.5 s', async (t) => {
  const database = await createFreshDatabase();
  const proxy = await databaseProxy(database.url);
  const patient = new TenantDatabase(proxy.url, { connectTimeoutMs: 4000 });
  t.teardown(async () => {
    await patient.close();
    await proxy.close();
    await database.drop();
  });
  proxy.freeze();
  const started = performance.now();
  const failed = await t.throwsAsync(patient.query(NO_TENANT, { sql: 'select 1', bindings: [] }));
  t.true(isDatabaseUnreachable(failed), failed?.message);
  t.true(performance.now() - started >= 3500, `gave up after ${Math.round(performance.now() - started)} ms`);
});

test('statements waiting for their tenant’s share when the database stops answering are refused at once, not sent after their wait (SPEC §7)', async (t) => {
  const database = await createFreshDatabase();
  const proxy = await databaseProxy(database.url);
  // The queue outlasts the holder's time limit, however stretched: the waiting statement is refused, not timed out.
  const shared = testTenantDatabase(proxy.url, { queryTimeoutMs: boundUnderLoad(1000), tenantConnections: 1, queueMs: 30_000 });
  t.teardown(async () => {
    await shared.close();
    await proxy.close();
    await database.drop();
  });
  await shared.query('acme', { sql: 'select 1', bindings: [] });
  proxy.freeze();
  const started = performance.now();
  const elapsed = (settled: Promise<unknown>) => settled.then(() => Number.NaN, () => performance.now() - started);
  const holding = elapsed(shared.query('acme', { sql: 'select 1', bindings: [] }));
  const waiting = shared.query('acme', { sql: 'select 1', bindings: [] });
  const waited = elapsed(waiting);
  const failed = await t.throwsAsync(waiting);
  t.true(isDatabaseUnreachable(failed), failed?.message);
  const [heldMs, waitedMs] = await Promise.all([holding, waited]);
  // Without the refusal, the waiting statement gets the share when the first is cut (~1.3 s)
  // and a new connection to the frozen database, and fails only after the connect time limit.
  t.true(waitedMs - heldMs < boundUnderLoad(200), `the statement holding the share failed after ${Math.round(heldMs)} ms, the one waiting after ${Math.round(waitedMs)} ms`);
  t.deepEqual(shared.shareCounts(), { tenantsAtShare: 0, shareWaiting: 0 });
});

for (const migrate of [false, true]) {
  test(`a database that takes the connection and never answers stops start-up${migrate ? ' (migrating first)' : ''} naming its address and DATABASE_CONNECT_TIMEOUT_MS, not its password`, async (t) => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    t.teardown(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });
    const { port } = silent.address() as { port: number };
    const env = { DATABASE_URL: `postgres://app:hunter2@127.0.0.1:${port}/app`, DATABASE_CONNECT_TIMEOUT_MS: '300', JWT_SECRET: 'a-secret-that-is-long-enough', DATA_DIR: scratchFolder('silent-database'), LOG_LEVEL: 'silent' };
    const error = await t.throwsAsync(createRuntime({ env, expert: {} }, { migrate }));
    t.is(error?.message, `database 127.0.0.1:${port} did not answer within 300 ms (DATABASE_CONNECT_TIMEOUT_MS): is it running and reachable? Raise DATABASE_CONNECT_TIMEOUT_MS if it is far or busy`);
    t.true(sockets.size > 0, 'it did connect');
  });
}

/** Holds `lock table <catalog> in access exclusive mode` on `url` until the returned function is called. */
async function holdCatalogLock(url: string, catalog: string): Promise<() => Promise<void>> {
  const holder = new pg.Client({ connectionString: url });
  // Ended by the database's drop when a test fails before it lets go.
  holder.on('error', () => {});
  await holder.connect();
  await holder.query('begin');
  await holder.query(`lock table ${catalog} in access exclusive mode`);
  return async () => {
    await holder.query('commit');
    await holder.end();
  };
}

test('start-up reads the database without the request time limit: a catalog locked past it delays start-up, never stops it', async (t) => {
  const database = await createMigratedDatabase();
  t.teardown(() => database.drop());
  // The Citus check reads pg_extension; locked, the read waits for the lock (before: "Query read timeout" at 300 ms).
  const release = await holdCatalogLock(database.url, 'pg_extension');
  const released = sleep(1000).then(release);
  const started = performance.now();
  const service = await startTestService(t, { databaseUrl: database.url, queryTimeoutMs: 300 });
  await released;
  t.true(performance.now() - started >= 900, 'it waited for the lock');
  t.is((await service.fetch('/readyz')).status, 200);
});

test('whether undeclared indexes are left is asked without a time limit: a lock held past a request time limit delays the answer', async (t) => {
  const database = await createMigratedDatabase();
  t.teardown(() => database.drop());
  const release = await holdCatalogLock(database.url, 'pg_statistic_ext');
  const started = performance.now();
  const asking = undeclaredLeft(database.url, [], 5000);
  await sleep(2000);
  await release();
  t.false(await asking);
  t.true(performance.now() - started >= 1900, 'it waited for the lock');
});
