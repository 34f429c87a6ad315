import { createMigrationFile, migrateLatest, migrationStatus, rollbackLast } from '../db/migrations.ts';
import { withRuntime } from './database.ts';
import type { CommandTable } from './command.ts';

export const migrationCommands: CommandTable = {
  migrate: () =>
    withRuntime(async ({ knex }) => {
      const applied = await migrateLatest(knex);
      return applied.length ? applied.map((name) => `applied ${name}`).join('\n') : 'already up to date';
    }),
  rollback: () =>
    withRuntime(async ({ knex }) => {
      const reverted = await rollbackLast(knex);
      return reverted.length ? reverted.map((name) => `rolled back ${name}`).join('\n') : 'nothing to roll back';
    }),
  'migrate-status': () =>
    withRuntime(async ({ knex }) => {
      const { applied, pending } = await migrationStatus(knex);
      return [...applied.map((name) => `applied  ${name}`), ...pending.map((name) => `pending  ${name}`)].join('\n') || 'no migrations';
    }),
  migration: async ([name]) => {
    if (!name) throw new UsageError('usage: make migration NAME=<name>');
    return `created ${createMigrationFile(name)}`;
  },
};

export class UsageError extends Error {
  override name = 'UsageError';
}
