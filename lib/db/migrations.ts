import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Knex } from 'knex';
import { createKnex, type KnexOptions } from './connect.ts';

export const MIGRATIONS_DIR = path.resolve(import.meta.dirname, '../../migrations');

interface MigrationModule {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** Loads `.ts` migrations with `import()`, so Node's type stripping runs them as they are. */
const migrationSource: Knex.MigrationSource<string> = {
  async getMigrations() {
    return readdirSync(MIGRATIONS_DIR).filter((file) => /^\d+_[\w-]+\.ts$/.test(file)).sort();
  },
  getMigrationName: (file) => file,
  getMigration: async (file) => (await import(pathToFileURL(path.join(MIGRATIONS_DIR, file)).href)) as MigrationModule,
};

const migratorConfig: Knex.MigratorConfig = { migrationSource };

/** An arbitrary constant: the key of the PostgreSQL advisory lock that migrations take. */
const MIGRATION_LOCK_KEY = 7_361_504_201;

/**
 * Runs the pending migrations. Several instances starting at once against a new database would
 * race to create knex's own tables (its lock lives in one of them), so the whole run holds a
 * PostgreSQL advisory lock: the others wait, then find nothing left to do.
 */
export async function migrateLatest(knex: Knex): Promise<string[]> {
  return withMigrationLock(knex, async () => {
    const [, applied] = (await knex.migrate.latest(migratorConfig)) as [number, string[]];
    return applied;
  });
}

async function withMigrationLock<Result>(knex: Knex, work: () => Promise<Result>): Promise<Result> {
  // The lock belongs to a session, so one pooled connection holds it while others migrate.
  const holder = (await knex.client.acquireConnection()) as unknown;
  try {
    await knex.raw('select pg_advisory_lock(?)', [MIGRATION_LOCK_KEY]).connection(holder);
    return await work();
  } finally {
    await knex.raw('select pg_advisory_unlock(?)', [MIGRATION_LOCK_KEY]).connection(holder).catch(() => undefined);
    await knex.client.releaseConnection(holder);
  }
}

/**
 * Brings the database at `url` up to date over a connection of its own, free of the time limit
 * the service puts on its queries: a migration may rightly run long.
 */
export async function migrateDatabase(url: string, options: Pick<KnexOptions, 'log'> = {}): Promise<string[]> {
  const knex = createKnex(url, options);
  try {
    return await migrateLatest(knex);
  } finally {
    await knex.destroy();
  }
}

export async function rollbackLast(knex: Knex, all = false): Promise<string[]> {
  const [, reverted] = (await knex.migrate.rollback(migratorConfig, all)) as [number, string[]];
  return reverted;
}

export async function migrationStatus(knex: Knex): Promise<{ applied: string[]; pending: string[] }> {
  const [applied, pending] = (await knex.migrate.list(migratorConfig)) as [{ name: string }[], string[]];
  return { applied: applied.map((entry) => entry.name), pending };
}

/** The parameters start with `_` so that an empty migration passes `make check` (unused parameters). */
const TEMPLATE = `import type { Knex } from 'knex';

export async function up(_knex: Knex): Promise<void> {}

export async function down(_knex: Knex): Promise<void> {}
`;

/** Writes an empty migration named `<UTC timestamp>_<name>.ts` and returns its path. */
export function createMigrationFile(name: string, directory = MIGRATIONS_DIR): string {
  if (!/^[a-z0-9][a-z0-9_-]*$/.test(name)) throw new Error(`migration name "${name}" must be lower-case letters, digits, _ or -`);
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const file = path.join(directory, `${stamp}_${name}.ts`);
  writeFileSync(file, TEMPLATE, { flag: 'wx' });
  return file;
}
