import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import type { Knex } from 'knex';
import { migratedDatabase, type MigratedDatabase, testTenantDatabase } from '../helpers/database.ts';

/**
 * A write held by a Citus shard split or move (`block_writes`) waits for it instead of failing
 * (SPEC §15.4), checked on plain PostgreSQL with the Citus form of the scope: the move's hold is
 * played by a lock on `documents` that refuses writes, held longer than the statement limit.
 * test/stress/citus.test.ts proves it under a real split and move.
 */
const STATEMENT_LIMIT_MS = 600;
let database: MigratedDatabase;

test.before(async () => {
  database = await migratedDatabase(['acme']);
});
test.after.always(async () => {
  await database?.close();
});

/** Holds writes to `documents` (reads go on) for `holdMs`, as a move with `block_writes` does. */
async function holdWrites(knex: Knex, holdMs: number): Promise<{ held: Promise<void> }> {
  let taken: () => void = () => {};
  const lockTaken = new Promise<void>((resolve) => {
    taken = resolve;
  });
  const held = knex.transaction(async (trx) => {
    await trx.raw('lock table documents in exclusive mode');
    taken();
    await sleep(holdMs);
  });
  await lockTaken;
  return { held };
}

const insertOf = (id: string) => ({ sql: "insert into documents (tenant, collection, id, doc) values ('acme', 'held', $1, '{}')", bindings: [id] });

test.serial('on Citus, a write held past the statement limit by a lock waits for it: its lock wait ends first (lock_timeout, half the limit) and is tried again', async (t) => {
  const citusForm = testTenantDatabase(database.url, { scopeForm: 'citus', queryTimeoutMs: STATEMENT_LIMIT_MS, shardMoveWaitMs: 10_000 });
  t.teardown(() => citusForm.close());
  const { held } = await holdWrites(database.knex, STATEMENT_LIMIT_MS * 3);
  const started = performance.now();
  await citusForm.query('acme', insertOf('waited'));
  const waited = performance.now() - started;
  await held;
  t.true(waited >= STATEMENT_LIMIT_MS * 2, `answered after the hold, ${Math.round(waited)} ms`);
  t.is((await database.knex('documents').where({ collection: 'held', id: 'waited' })).length, 1);
});

test.serial('on Citus, a write held longer than its wait (the request’s limit) fails with the lock wait’s error', async (t) => {
  const citusForm = testTenantDatabase(database.url, { scopeForm: 'citus', queryTimeoutMs: STATEMENT_LIMIT_MS, shardMoveWaitMs: 1000 });
  t.teardown(() => citusForm.close());
  const { held } = await holdWrites(database.knex, 3000);
  const started = performance.now();
  await t.throwsAsync(citusForm.query('acme', insertOf('given-up')), { message: /lock timeout/ });
  const failedAfter = performance.now() - started;
  await held;
  t.true(failedAfter < 2000, `given up after ${Math.round(failedAfter)} ms`);
});

test.serial('on plain PostgreSQL nothing changes: a write held past the statement limit fails at the limit, not tried again', async (t) => {
  const statementForm = testTenantDatabase(database.url, { queryTimeoutMs: STATEMENT_LIMIT_MS, shardMoveWaitMs: 10_000 });
  t.teardown(() => statementForm.close());
  const { held } = await holdWrites(database.knex, STATEMENT_LIMIT_MS * 3);
  await t.throwsAsync(statementForm.query('acme', insertOf('cut')), { message: /statement timeout/ });
  await held;
  t.is((await database.knex('documents').where({ collection: 'held', id: 'cut' })).length, 0);
});
