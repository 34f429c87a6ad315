import { distributeTables } from '../db/distribute.ts';
import { describeBlockers, type LockRetry } from '../db/lock-retries.ts';
import { createMigrationFile, type MigrationKind, type MigrationState, migrateContract, migrateLatest, migrationStatus, rollbackLast } from '../db/migrations.ts';
import { databaseAddress } from '../db/connect.ts';
import type { Runtime } from '../core/runtime.ts';
import { withRuntime } from './database.ts';
import type { CommandTable } from './command.ts';

/** Each attempt that waits for a lock in vain is one line on stderr, so a DBA sees what holds it. */
const onRetry = (retry: LockRetry) =>
  process.stderr.write(`${retry.label}: lock not available (attempt ${retry.attempt} of ${retry.attempts}, next in ${retry.pauseMs} ms): ${describeBlockers(retry.blockers)}\n`);

const appliedLines = (applied: string[]) => (applied.length ? applied.map((name) => `applied ${name}`).join('\n') : 'already up to date');

export const migrationCommands: CommandTable = {
  migrate: () =>
    onDatabase(async ({ knex }) => {
      const applied = appliedLines(await migrateLatest(knex, { onRetry }));
      const waiting = (await migrationStatus(knex)).filter((state) => state.kind === 'contract' && !state.applied);
      return waiting.length === 0 ? applied : `${applied}\n${waiting.length} contract migration(s) wait: run make migrate-contract once every instance runs this release`;
    }),
  'migrate-contract': () => onDatabase(async ({ knex }) => appliedLines(await migrateContract(knex, { onRetry }))),
  rollback: () =>
    onDatabase(async ({ knex }) => {
      const reverted = await rollbackLast(knex, false, { onRetry });
      return reverted.length ? reverted.map((name) => `rolled back ${name}`).join('\n') : 'nothing to roll back';
    }),
  distribute: () => onDatabase(async ({ knex }) => (await distributeTables(knex)).join('\n') || 'already distributed'),
  'migrate-status': () => onDatabase(async ({ knex }) => statusTable(await migrationStatus(knex))),
  migration: async ([name, kind = 'expand']) => {
    if (!name) throw new UsageError('usage: make migration NAME=<name> [KIND=expand|contract]');
    if (kind !== 'expand' && kind !== 'contract') throw new UsageError(`KIND must be expand or contract, not "${kind}"`);
    return `created ${createMigrationFile(name, undefined, kind as MigrationKind)}`;
  },
};

/**
 * `work`'s output after a line saying which database it changed or read (`database: db.internal:5432/spaceport`, never
 * the user or password): without DATABASE_URL it is the embedded one, which a DBA upgrading a fleet did not mean.
 */
function onDatabase(work: (runtime: Runtime) => Promise<string>): Promise<string> {
  return withRuntime(async (runtime) => {
    const name = databaseAddress(runtime.sessionUrl, { withName: true });
    const which = runtime.secrets.databaseUrl === undefined ? `the embedded PostgreSQL of ${runtime.config.dataDir} (DATABASE_URL is not set), ${name}` : name;
    return `database: ${which}\n${await work(runtime)}`;
  });
}

/** `applied  expand    20261122000001_tenants.ts  batch 1, 2026-11-22 10:00:00`, one line a migration. */
function statusTable(states: readonly MigrationState[]): string {
  if (states.length === 0) return 'no migrations';
  const width = Math.max(...states.map((state) => state.name.length));
  return states
    .map((state) => {
      const when = state.applied && state.appliedAt ? `  batch ${state.batch}, ${state.appliedAt.toISOString().replace('T', ' ').slice(0, 19)}` : '';
      return `${(state.applied ? 'applied' : 'pending').padEnd(9)}${state.kind.padEnd(10)}${state.name.padEnd(width)}${when}`.trimEnd();
    })
    .join('\n');
}

export class UsageError extends Error {
  override name = 'UsageError';
}
