import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Knex } from 'knex';

export const MIGRATIONS_DIR = path.resolve(import.meta.dirname, '../../migrations');

/** *Expand* (additive) migrations run before new code serves; *contract* ones (`migrations/contract/`) once every instance runs it. */
export type MigrationKind = 'expand' | 'contract';

export const CONTRACT_FOLDER = 'contract';

export interface MigrationFile {
  /** Under `contract/` for a contract one, so knex's table alone tells an older release that a later one's contract migrations ran. */
  readonly name: string;
  readonly kind: MigrationKind;
  readonly path: string;
}

/** What a migration module exports. `waivers`: rules of the safety check it is allowed to break, each with the reason. */
export interface MigrationModule {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
  config?: { transaction?: boolean };
  waivers?: Waivers;
}

/** Rule name → why this migration may break it (README, For DBAs: waiving a rule). */
export type Waivers = Readonly<Record<string, string>>;

const MIGRATION_FILE = /^\d+_[\w-]+\.ts$/;

export function listMigrations(directory = MIGRATIONS_DIR): MigrationFile[] {
  const contractDirectory = path.join(directory, CONTRACT_FOLDER);
  const files = [
    ...migrationsIn(directory).map((file): MigrationFile => ({ name: file, kind: 'expand', path: path.join(directory, file) })),
    ...migrationsIn(contractDirectory).map((file): MigrationFile => ({ name: `${CONTRACT_FOLDER}/${file}`, kind: 'contract', path: path.join(contractDirectory, file) })),
  ];
  const order = (file: MigrationFile) => path.basename(file.path);
  return files.sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
}

/** A script of any name: one not named as a migration would be skipped, and its changes never made, with nothing said. */
const SCRIPT = /\.[cm]?[jt]s$/;

function migrationsIn(directory: string): string[] {
  const files = existsSync(directory) ? readdirSync(directory) : [];
  const unnamed = files.find((file) => SCRIPT.test(file) && !MIGRATION_FILE.test(file));
  if (unnamed !== undefined) {
    throw new Error(`${path.join(directory, unnamed)} is not named as a migration (<UTC timestamp>_<name>.ts, as make migration NAME=<name> writes it): rename it, or move it out of the folder`);
  }
  return files.filter((file) => MIGRATION_FILE.test(file));
}

export function loadMigration(file: MigrationFile): Promise<MigrationModule> {
  return import(pathToFileURL(file.path).href) as Promise<MigrationModule>;
}

/** knex's view of `files`: each loaded with `import()`, so Node's type stripping runs it as it is. */
export function migrationSource(files: readonly MigrationFile[]): Knex.MigrationSource<MigrationFile> {
  return {
    getMigrations: async () => [...files],
    getMigrationName: (file) => file.name,
    getMigration: async (file) => namingFailures(file, await failingAs(file, () => loadMigration(file))),
  };
}

function namingFailures(file: MigrationFile, migration: MigrationModule): MigrationModule {
  return { ...migration, up: (knex) => failingAs(file, () => migration.up(knex)), down: (knex) => failingAs(file, () => migration.down(knex)) };
}

/** knex says what went wrong, but not in which migration. */
async function failingAs<Result>(file: MigrationFile, work: () => Promise<Result>): Promise<Result> {
  try {
    return await work();
  } catch (error) {
    throw new MigrationFailedError(file, error);
  }
}

/**
 * `migration 2026…_x.ts failed: …`. Keeps its cause's SQLSTATE, by which the runner tells a lock timeout (tried again) from a
 * failure. A statement's failure is one line (knex puts the statement, as written, before PostgreSQL's reason): a make
 * target prints an error's first line, which was empty for a statement written over several lines.
 */
export class MigrationFailedError extends Error {
  override name = 'MigrationFailedError';
  readonly code: unknown;

  constructor(file: MigrationFile, cause: unknown) {
    const message = cause instanceof Error ? cause.message : String(cause);
    super(`migration ${file.name} failed: ${isStatementError(cause) ? message.replace(/\s+/g, ' ').trim() : message}`, { cause });
    this.code = (cause as { code?: unknown } | null)?.code;
  }
}

/** PostgreSQL's error (pg's DatabaseError carries its severity): its message is SQL and reason, in which line breaks are only spacing. */
function isStatementError(cause: unknown): boolean {
  return cause instanceof Error && typeof (cause as { severity?: unknown }).severity === 'string';
}

/** The parameters start with `_` so that an empty migration passes `make check` (unused parameters). */
const TEMPLATES: Record<MigrationKind, string> = {
  expand: `import type { Knex } from 'knex';

/**
 * Expand: runs while the release before still serves, so it only adds (README, For DBAs). Each
 * transaction's lock waits are bounded and retried by the runner; an index on an existing table
 * is built with createIndexConcurrently, rows are changed with inBatches (lib/db/migration-tools.ts).
 */
export async function up(_knex: Knex): Promise<void> {}

export async function down(_knex: Knex): Promise<void> {}
`,
  contract: `import type { Knex } from 'knex';

/**
 * Contract: runs once every instance runs the new release (make migrate-contract), so it may take
 * away what only the release before used (README, For DBAs).
 */
export async function up(_knex: Knex): Promise<void> {}

export async function down(_knex: Knex): Promise<void> {}
`,
};

/** Writes an empty migration named `<UTC timestamp>_<name>.ts` of `kind`, after every migration of `directory`, and returns its path. */
export function createMigrationFile(name: string, directory = MIGRATIONS_DIR, kind: MigrationKind = 'expand'): string {
  if (!/^[a-z0-9][a-z0-9_-]*$/.test(name)) throw new Error(`migration name "${name}" must be lower-case letters, digits, _ or -`);
  const folder = kind === 'contract' ? path.join(directory, CONTRACT_FOLDER) : directory;
  mkdirSync(folder, { recursive: true });
  const file = path.join(folder, `${nextStamp(directory)}_${name}.ts`);
  writeFileSync(file, TEMPLATES[kind], { flag: 'wx' });
  return file;
}

const STAMP = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})_/;

/**
 * Now, or one second after the latest migration of either kind when that one is dated later (a clock behind, or a
 * migration dated ahead): migrations run in the order of their names, and a new one must come after what it builds on.
 */
function nextStamp(directory: string): string {
  const latest = Math.max(...listMigrations(directory).map((file) => stampTime(path.basename(file.path)) + 1000));
  return new Date(Math.max(Date.now(), latest)).toISOString().replace(/\D/g, '').slice(0, 14);
}

/** `20261205000016_x.ts` → its time in ms; -Infinity for a name that does not start with a UTC timestamp. */
function stampTime(file: string): number {
  const parts = STAMP.exec(file)?.slice(1).map(Number);
  if (!parts) return Number.NEGATIVE_INFINITY;
  const [year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0] = parts;
  return Date.UTC(year, month - 1, day, hour, minute, second);
}
