import path from 'node:path';
import type { Knex } from 'knex';
import { createKnex, type KnexOptions } from './connect.ts';
import { type LockAttempt, type LockRetry, type LockRetryOptions, retryLocks, setLockTimeout } from './lock-retries.ts';
import { listMigrations, type MigrationKind, migrationSource } from './migration-files.ts';

export { createMigrationFile, MIGRATIONS_DIR, type MigrationKind } from './migration-files.ts';

export interface MigrationRunOptions {
  readonly directory?: string;
  readonly attempts?: readonly LockAttempt[];
  readonly onRetry?: (retry: LockRetry) => void;
}

export interface MigrationState {
  readonly name: string;
  /** `unknown` for a migration the database ran whose file this release lacks (a later release's). */
  readonly kind: MigrationKind | 'unknown';
  readonly applied: boolean;
  readonly batch?: number;
  readonly appliedAt?: Date;
}

type RunOptions = MigrationRunOptions & Pick<LockRetryOptions, 'watchConnection'>;

const TABLE = 'knex_migrations';

/** An arbitrary constant. */
const MIGRATION_LOCK_KEY = 7_361_504_201;

/** The `application_name` of the session holding the lock, by which another run's line (and pg_stat_activity) names it. */
const LOCK_HOLDER_NAME = 'spaceport migration runner';

/**
 * The pending expand migrations (`make migrate`, every start-up); on a new database no older code serves, so the
 * contract ones too. Refuses when an earlier contract migration has not run, or a later release's has.
 */
export async function migrateLatest(knex: Knex, givenOptions: MigrationRunOptions = {}): Promise<string[]> {
  // Nothing of this release's left to run: an instance restarting while another run holds the lock (a long index
  // build) starts at once, rather than wait for the lock and fail after the last attempt.
  const before = await migrationStatus(knex, givenOptions);
  if (before.some((state) => state.applied) && !before.some((state) => !state.applied && state.kind === 'expand')) {
    refuseNewerContracts(before);
    return [];
  }
  return withMigrationLock(knex, givenOptions, async (holder) => {
    const options = { ...givenOptions, watchConnection: holder };
    const states = await migrationStatus(knex, options);
    const pending = states.filter((state) => !state.applied);
    if (!states.some((state) => state.applied)) return installEverything(knex, options);
    refuseNewerContracts(states);
    refuseBehindContract(pending);
    return runMigrations(
      knex,
      options,
      pending.filter((state) => state.kind === 'expand'),
    );
  });
}

/** Runs every pending migration, contract ones included: `make migrate-contract`, once every instance runs the release. */
export async function migrateContract(knex: Knex, options: MigrationRunOptions = {}): Promise<string[]> {
  return withMigrationLock(knex, options, async (holder) => {
    const states = await migrationStatus(knex, options);
    return runMigrations(
      knex,
      { ...options, watchConnection: holder },
      states.filter((state) => !state.applied),
    );
  });
}

/** Reverts the last batch (every batch with `all`), whatever its kind, but never alone the run that installed the database: `make rollback`. */
export async function rollbackLast(knex: Knex, all = false, options: MigrationRunOptions = {}): Promise<string[]> {
  return withMigrationLock(knex, options, async (holder) => {
    const states = await migrationStatus(knex, options);
    refuseUnknown(states);
    if (!all) refuseUninstalling(states);
    return retryLocks(knex, { ...options, label: 'rollback', watchConnection: holder }, async (attempt, watch) => {
      const [, reverted] = (await knex.migrate.rollback({ migrationSource: migrationSource(listMigrations(options.directory)), beforeEach: boundLocks(attempt, watch) }, all)) as [number, string[]];
      return reverted;
    });
  });
}

export async function migrationStatus(knex: Knex, options: Pick<MigrationRunOptions, 'directory'> = {}): Promise<MigrationState[]> {
  const files = listMigrations(options.directory);
  const ran = new Map((await appliedRows(knex)).map((row) => [row.name, row]));
  const known = new Set(files.map((file) => file.name));
  const states: MigrationState[] = files.map((file) => {
    const row = ran.get(file.name);
    return row ? { name: file.name, kind: file.kind, applied: true, batch: row.batch, appliedAt: row.migration_time } : { name: file.name, kind: file.kind, applied: false };
  });
  for (const row of ran.values()) {
    if (!known.has(row.name)) states.push({ name: row.name, kind: 'unknown', applied: true, batch: row.batch, appliedAt: row.migration_time });
  }
  refuseMoved(states);
  return states;
}

/** A file's kind is in its name (`contract/`): moved to the other folder after it ran, it would look new and run again. */
function refuseMoved(states: readonly MigrationState[]): void {
  const ranAs = new Map(states.filter((state) => state.kind === 'unknown').map((state) => [path.basename(state.name), state.name]));
  const moved = states.find((state) => !state.applied && ranAs.has(path.basename(state.name)));
  if (moved) {
    throw new Error(`${moved.name} ran as ${ranAs.get(path.basename(moved.name))}: a migration that ran keeps its folder (its kind), or it would run again; move it back`);
  }
}

/** On a connection of its own, free of the service's query time limit: a migration may rightly run long. */
export async function migrateDatabase(url: string, options: Pick<KnexOptions, 'log' | 'connectTimeoutMs'> & MigrationRunOptions = {}): Promise<string[]> {
  const knex = createKnex(url, options);
  try {
    return await migrateLatest(knex, options);
  } finally {
    await knex.destroy();
  }
}

interface AppliedRow {
  name: string;
  batch: number;
  migration_time: Date;
}

async function appliedRows(knex: Knex): Promise<AppliedRow[]> {
  if (!(await knex.schema.hasTable(TABLE))) return [];
  return knex(TABLE).select('name', 'batch', 'migration_time').orderBy('id');
}

function refuseNewerContracts(states: readonly MigrationState[]): void {
  const newer = states.filter((state) => state.kind === 'unknown' && state.name.startsWith('contract/'));
  if (newer.length > 0) {
    throw new Error(`this release is older than the database: contract migrations of a later release have run (${newer.map((state) => state.name).join(', ')}), so its code would miss what they removed`);
  }
}

/** Only the release that holds a migration's file can revert it (knex would say its directory is corrupt). */
function refuseUnknown(states: readonly MigrationState[]): void {
  const unknown = states.filter((state) => state.kind === 'unknown').map((state) => state.name);
  if (unknown.length > 0) {
    throw new Error(`the database has migrations this release does not hold (${unknown.join(', ')}): run make rollback with the release that has them first (README, Going back)`);
  }
}

/** A deploy's run is reverted; the one that installed the database would drop every table, each tenant's data with it. */
function refuseUninstalling(states: readonly MigrationState[]): void {
  const applied = states.filter((state) => state.applied);
  const last = Math.max(...applied.map((state) => state.batch ?? 0));
  if (applied.length === 0 || applied.some((state) => state.batch !== last)) return;
  throw new Error(
    `make rollback would revert every migration this database has (batch ${last}, ${applied.length} migrations: the run that installed it), ` +
      "dropping every table with its data: it reverts a deploy's migrations, not an installation (drop the database to start again)",
  );
}

function refuseBehindContract(pending: readonly MigrationState[]): void {
  const contract = pending.find((state) => state.kind === 'contract');
  const later = contract && pending.find((state) => state.kind === 'expand' && state.name > contract.name.replace('contract/', ''));
  if (contract && later) {
    throw new Error(
      `the contract migration ${contract.name} has not run, and the pending expand migration ${later.name} comes after it: ` +
        'run make migrate-contract first (once every instance runs the release that brought it), then migrate',
    );
  }
}

/** One at a time, each retried for its lock; recorded as one batch, so `make rollback` reverts the run. */
async function runMigrations(knex: Knex, options: RunOptions, pending: readonly MigrationState[]): Promise<string[]> {
  const source = migrationSource(listMigrations(options.directory));
  const applied: string[] = [];
  try {
    for (const { name } of pending) {
      await retryLocks(knex, { ...options, label: `migration ${name}` }, (attempt, watch) =>
        knex.migrate.up({ migrationSource: source, name, disableMigrationsListValidation: true, beforeEach: boundLocks(attempt, watch) }),
      );
      applied.push(name);
    }
  } finally {
    await asOneBatch(knex, applied);
  }
  return applied;
}

/** Nothing older serves a new database, so knex runs every migration in one go: what a test suite does most. */
async function installEverything(knex: Knex, options: RunOptions): Promise<string[]> {
  const source = migrationSource(listMigrations(options.directory));
  return retryLocks(knex, { ...options, label: 'migrations of a new database' }, async (attempt, watch) => {
    const [, applied] = (await knex.migrate.latest({ migrationSource: source, beforeEach: boundLocks(attempt, watch) })) as [number, string[]];
    return applied;
  });
}

function boundLocks(attempt: LockAttempt, watch: (trx: Knex.Transaction) => Promise<void>) {
  return async (knexOrTransaction: Knex | Knex.Transaction) => {
    if (!knexOrTransaction.isTransaction) return;
    await knexOrTransaction.raw(setLockTimeout(attempt.lockTimeoutMs));
    await watch(knexOrTransaction as Knex.Transaction);
  };
}

async function asOneBatch(knex: Knex, names: readonly string[]): Promise<void> {
  if (names.length < 2) return;
  const [{ first }] = (await knex(TABLE).whereIn('name', names).min('batch as first')) as [{ first: number }];
  await knex(TABLE).whereIn('name', names).update({ batch: first });
}

/**
 * Waited for as a table's lock is, under a short `lock_timeout` and again after a pause, each attempt in vain reported
 * naming the holder, and bounded. Not one unbounded `pg_advisory_lock()`: a backend waiting there holds a snapshot
 * that `CREATE INDEX CONCURRENTLY` in the running migration waits for, a deadlock PostgreSQL cannot see (it goes
 * through the lock holder's other connection); an attempt that gives up lets the build go on.
 */
async function takeAdvisoryLock(knex: Knex, holder: unknown, options: MigrationRunOptions): Promise<void> {
  await retryLocks(knex, { ...options, label: 'the migration runner' }, (attempt, watch) =>
    knex.transaction(
      async (trx) => {
        await trx.raw(setLockTimeout(attempt.lockTimeoutMs));
        await watch(trx);
        // A session's lock: it outlasts this transaction, and so does the session's name (`false`: not local).
        await trx.raw('select pg_advisory_lock(?), set_config(?, ?, false)', [MIGRATION_LOCK_KEY, 'application_name', LOCK_HOLDER_NAME]);
      },
      { connection: holder },
    ),
  );
}

/**
 * knex's own lock, a row of `knex_migrations_lock`, stays set when a run holding it outside a transaction (a migration with
 * `config.transaction = false`) dies: every later run and start-up then failed with 'Migration table is already locked'. The
 * holder of the advisory lock is the only run, so a lock knex finds set then is one a dead run left.
 */
async function freeKnexLock(knex: Knex, holder: unknown): Promise<void> {
  const { rows } = await knex.raw<{ rows: Array<{ present: boolean }> }>("select to_regclass('knex_migrations_lock') is not null as present").connection(holder);
  if (rows[0]?.present) await knex.raw('update knex_migrations_lock set is_locked = 0 where is_locked <> 0').connection(holder);
}

/** Instances starting at once on a new database would race to create knex's own tables (its lock lives in one). */
async function withMigrationLock<Result>(knex: Knex, options: MigrationRunOptions, work: (holder: unknown) => Promise<Result>): Promise<Result> {
  // A session's lock: this connection holds it, idle meanwhile, so the watch for blockers runs on it too.
  const holder = (await knex.client.acquireConnection()) as unknown;
  try {
    await takeAdvisoryLock(knex, holder, options);
    await freeKnexLock(knex, holder);
    return await work(holder);
  } finally {
    await knex.raw("select pg_advisory_unlock(?), set_config('application_name', '', false)", [MIGRATION_LOCK_KEY]).connection(holder).catch(() => undefined);
    await knex.client.releaseConnection(holder);
  }
}
