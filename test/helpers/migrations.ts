import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { CONTRACT_FOLDER, listMigrations, MIGRATIONS_DIR } from '../../lib/db/migration-files.ts';
import { scratchFolder } from './scratch.ts';

/** The repository's root, for migrations written by a test that import the service's modules. */
export const REPOSITORY = path.resolve(import.meta.dirname, '../..');

export interface MigrationFolderOptions {
  /** Keep only the repository's migrations named before this one (`20261126000011`). */
  before?: string;
  /** Expand migrations to add: file name → source. */
  expand?: Record<string, string>;
  /** Contract migrations to add (in `contract/`). */
  contract?: Record<string, string>;
  /** A folder of migrations (a fixture) linked in beside the repository's, both kinds. */
  link?: string;
}

/**
 * A migrations folder for one test: the repository's migrations (links to them, so each is the
 * same module), with `expand` and `contract` files of the test's own beside them; removed after the test.
 */
export function migrationFolder(t: ExecutionContext, options: MigrationFolderOptions = {}): string {
  const folder = scratchFolder('migrations');
  t.teardown(() => rmSync(folder, { recursive: true, force: true }));
  mkdirSync(path.join(folder, CONTRACT_FOLDER));
  for (const file of listMigrations(MIGRATIONS_DIR)) {
    if (options.before !== undefined && path.basename(file.path) >= options.before) continue;
    symlinkSync(file.path, path.join(folder, file.name));
  }
  for (const file of options.link === undefined ? [] : listMigrations(options.link)) symlinkSync(file.path, path.join(folder, file.name));
  for (const [name, source] of Object.entries(options.expand ?? {})) writeFileSync(path.join(folder, name), source);
  for (const [name, source] of Object.entries(options.contract ?? {})) writeFileSync(path.join(folder, CONTRACT_FOLDER, name), source);
  return folder;
}

/** A transactional migration running `up` (SQL statements) and `down`. */
export function sqlMigration(up: string[], down: string[] = []): string {
  const statements = (list: string[]) => list.map((statement) => `  await knex.raw(${JSON.stringify(statement)});`).join('\n');
  return `import type { Knex } from 'knex';\n\nexport async function up(knex: Knex): Promise<void> {\n${statements(up)}\n}\n\nexport async function down(knex: Knex): Promise<void> {\n${statements(down)}\n}\n`;
}
