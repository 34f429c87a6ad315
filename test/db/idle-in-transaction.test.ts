import test from 'ava';
import { IDLE_IN_TRANSACTION_MARGIN_MS, loadConfig } from '../../lib/config/index.ts';
import { migratedDatabase, testTenantDatabase } from '../helpers/database.ts';

// SPEC §17.1, the database's backstop: a process that stops mid-transaction without its
// connection closing (frozen, cut off) cannot roll back itself. PostgreSQL ends such a
// transaction after `idle_in_transaction_session_timeout`, set with each of the pool's
// transactions (never for the session: a transaction-mode pooler hands sessions on).

const IDLE_MS = 700;
const STOPPED_MS = 3000;

test('a transaction whose process stops sending is ended by PostgreSQL after the idle limit, and nothing of it commits', async (t) => {
  const database = await migratedDatabase(['default']);
  const pool = testTenantDatabase(database.url, { idleInTransactionMs: IDLE_MS });
  t.teardown(async () => {
    await pool.close();
    await database.close();
  });
  const idleBackends = async () => {
    const { rows } = await database.knex.raw<{ rows: Array<{ count: number }> }>(
      "select count(*)::int as count from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'",
    );
    return rows[0]?.count ?? 0;
  };
  let written!: () => void;
  const open = new Promise<void>((resolve) => {
    written = resolve;
  });
  const stopped = pool.transaction('default', async (run) => {
    await run({ sql: "insert into documents (tenant, collection, id, doc) values ('default', 'notes', 'stopped', '{}')", bindings: [] });
    written();
    // As a frozen process would: nothing more is sent on the connection.
    await new Promise((resolve) => setTimeout(resolve, STOPPED_MS));
  });
  stopped.catch(() => undefined);
  await open;
  const since = Date.now();
  t.is(await idleBackends(), 1, 'the transaction waits, idle');
  while ((await idleBackends()) > 0 && Date.now() - since < STOPPED_MS - 500) await new Promise((resolve) => setTimeout(resolve, 50));
  t.is(await idleBackends(), 0, 'PostgreSQL ended the idle transaction before the process came back');
  t.log(`ended ${Date.now() - since} ms after its last statement (limit ${IDLE_MS} ms)`);
  await t.throwsAsync(stopped, undefined, 'its commit fails: the session is gone');
  t.is((await database.knex('documents').where({ id: 'stopped' })).length, 0);
  await pool.query('default', { sql: 'select 1', bindings: [] });
  t.pass('the pool goes on with a new connection');
});

test('the longest limits.handlerMs the configuration accepts gives an idle limit PostgreSQL accepts', async (t) => {
  const limitsOf = (handlerMs: number) => loadConfig({ env: { JWT_SECRET: 'a-secret-that-is-long-enough', DATA_DIR: '.' }, expert: { limits: { handlerMs } } }).config.limits;
  t.throws(() => limitsOf(2_147_478_648), { message: /limits\.handlerMs/ });
  const { handlerMs } = limitsOf(2_147_478_647);
  const database = await migratedDatabase(['default']);
  const pool = testTenantDatabase(database.url, { idleInTransactionMs: handlerMs + IDLE_IN_TRANSACTION_MARGIN_MS });
  t.teardown(async () => {
    await pool.close();
    await database.close();
  });
  const { rows } = await pool.transaction('default', (run) => run({ sql: "select current_setting('idle_in_transaction_session_timeout') as idle", bindings: [] }));
  t.deepEqual(rows, [{ idle: '2147483647ms' }]);
});
