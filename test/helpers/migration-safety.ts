import { execFile } from 'node:child_process';
import { existsSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { setLockTimeout } from '../../lib/db/lock-retries.ts';
import { listMigrations, loadMigration, type MigrationKind, type Waivers } from '../../lib/db/migration-files.ts';
import { createFreshDatabase, testKnex } from './database.ts';
import { REPOSITORY } from './migrations.ts';
import { scratchFolder } from './scratch.ts';

/**
 * The safety check of migrations (SPEC §18.3): each migration is run on a fresh database as the
 * runner runs it, the SQL it sends is recorded, and squawk (a PostgreSQL migration linter, from
 * the npm registry) reads it. What breaks the release before is refused in an expand migration;
 * what holds a table longer than a lock wait is refused in both kinds. A migration may waive a
 * rule only with a written reason (`export const waivers = { rule: 'why' }`).
 */
export const SQUAWK = path.join(REPOSITORY, 'node_modules/@squawk-cli/linux-x64/bin/squawk');

/**
 * Rules of squawk this project does not apply: matters of column types and style
 * (`prefer-*`, `ban-char-field`), and `require-statement-timeout`: a migration's statements may
 * rightly run long; what must stay short is how long others wait on them, which the lock rules
 * and the batches bound.
 */
const NOT_APPLIED = [
  'require-statement-timeout',
  'prefer-bigint-over-int',
  'prefer-bigint-over-smallint',
  'prefer-identity',
  'prefer-text-field',
  'prefer-timestamptz',
  'ban-char-field',
];

/** What a contract migration may do, since no code of the release before runs any more. */
const CONTRACT_MAY = ['ban-drop-column', 'ban-drop-table', 'renaming-column', 'renaming-table', 'ban-drop-not-null', 'adding-required-field', 'ban-drop-object', 'renaming-object', 'ban-drop-default', 'ban-revoke'];

/** Objects other than tables and columns that the release before may name in its SQL. */
const OBJECT = String.raw`(?:materialized\s+view|view|function|procedure|routine|aggregate|type|domain|schema|sequence)`;

/**
 * Rules of this project's own, for what squawk has no rule on (it lints tables and columns), read
 * like squawk's: dropping, renaming or moving a view, function or type, dropping a column's default
 * (what adding-required-field refuses, in two steps), revoking a privilege, and a DO block, whose
 * statements squawk does not read (so that it would hide any of the rules above).
 */
const OWN_RULES = [
  { rule: 'ban-drop-object', pattern: new RegExp(String.raw`\bdrop\s+${OBJECT}\b`, 'gi'), message: 'Dropping a view, function, type or other object may break existing clients.' },
  {
    rule: 'renaming-object',
    pattern: new RegExp(String.raw`\balter\s+(?:${OBJECT}\b[^;]*?\brename|(?:${OBJECT}|table)\b[^;]*?\bset\s+schema)\b`, 'gi'),
    message: 'Renaming a view, function, type or enum value, or moving an object to another schema, may break existing clients.',
  },
  {
    rule: 'ban-drop-default',
    pattern: /\balter\s+(?:column\s+)?(?:"[^"]+"|\w+)\s+drop\s+default\b/gi,
    message: 'Dropping a default may break existing clients: the release before inserts without the column (a NOT NULL one then refuses it).',
  },
  { rule: 'ban-revoke', pattern: /\brevoke\s/gi, message: 'Revoking a privilege may break existing clients: the release before runs its statements with it.' },
  { rule: 'do-block', pattern: /(?<=(?:^|;)\s*)do\s/gi, message: 'The check does not read the statements of a DO block: send them as statements of their own, or waive it with the reason.' },
];

/** A reason shorter than this is no reason. */
const SHORTEST_REASON = 20;

export interface Finding {
  /** The migration's file, relative to the repository when inside it. */
  readonly file: string;
  readonly rule: string;
  readonly message: string;
  /** The statement at fault. */
  readonly statement: string;
}

export interface RecordedMigration {
  readonly name: string;
  readonly kind: MigrationKind;
  readonly file: string;
  readonly sql: string;
  readonly waivers: Waivers;
}

/** Runs every migration of `directory` in order on a fresh database, recording the SQL each sends. */
export async function recordMigrations(directory: string): Promise<RecordedMigration[]> {
  const database = await createFreshDatabase();
  const knex = testKnex(database.url);
  let statements: string[] = [];
  knex.on('query', (query: { sql: string; bindings?: unknown[] }) => {
    if (!isBookkeeping(query.sql)) statements.push(withLiterals(query.sql, query.bindings ?? []));
  });
  try {
    const recorded: RecordedMigration[] = [];
    for (const file of listMigrations(directory)) {
      const migration = await loadMigration(file);
      statements = [];
      if (migration.config?.transaction === false) await migration.up(knex);
      else
        await knex.transaction(async (trx) => {
          await trx.raw(setLockTimeout(100));
          await migration.up(trx);
        });
      recorded.push({ name: file.name, kind: file.kind, file: relative(file.path), sql: asScript(statements), waivers: migration.waivers ?? {} });
    }
    return recorded;
  } finally {
    await knex.destroy();
    await database.drop();
  }
}

/**
 * The runner's own statements (progress of batches, watching for blockers), not the migration's:
 * each one statement that reads or writes only its bookkeeping. A migration's string holding more
 * than one statement, or one that changes the schema, is linted whatever it names.
 */
function isBookkeeping(sql: string): boolean {
  const oneStatement = !/;\s*\S/.test(sql.trim().replace(/;+$/, ''));
  return oneStatement && /^\s*(?:select|insert|delete|create table if not exists)\b/i.test(sql) && /knex_migrations|pg_backend_pid\(\)|pg_blocking_pids/.test(sql);
}

/** The file's place in the repository (a test's folder of migrations links to them). */
function relative(file: string): string {
  const inside = path.relative(REPOSITORY, realpathSync(file));
  return inside.startsWith('..') ? file : inside;
}

/** `$1` placeholders replaced by the values, as literals, so the linter reads whole statements. */
function withLiterals(sql: string, bindings: readonly unknown[]): string {
  return sql.replace(/\$(\d+)/g, (placeholder, number: string) => {
    const value = bindings[Number(number) - 1];
    if (value === undefined) return placeholder;
    if (value === null) return 'null';
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    return `'${String(typeof value === 'object' ? JSON.stringify(value) : value).replaceAll("'", "''")}'`;
  });
}

/** Each statement ended by `;`, on a line of its own after a statement whose last line holds a `--` comment, which would swallow it. */
function asScript(statements: readonly string[]): string {
  return statements
    .map((statement) => {
      const text = statement.trim().replace(/;+$/, '');
      return `${text}${text.split('\n').at(-1)?.includes('--') ? '\n' : ''};\n`;
    })
    .join('\n');
}

interface SquawkViolation {
  file: string;
  line: number;
  rule_name: string;
  message: string;
}

/**
 * What the check refuses, one line each: `migrations/x.ts: ban-drop-column: Dropping a column may
 * break existing clients. (alter table …)`, and waivers without a reason or of a rule the migration
 * does not break (they would hide a later breach).
 */
export async function refusals(migrations: readonly RecordedMigration[]): Promise<string[]> {
  const findings = await lint(migrations);
  const broken = new Set(findings.map((finding) => `${finding.file} ${finding.rule}`));
  const waived = (finding: Finding) => {
    const reason = migrations.find((migration) => migration.file === finding.file)?.waivers[finding.rule];
    return reason !== undefined && reason.trim().length >= SHORTEST_REASON;
  };
  const unwaived = findings.filter((finding) => !waived(finding)).map((finding) => `${finding.file}: ${finding.rule}: ${finding.message} (${finding.statement})`);
  const waivers = migrations.flatMap((migration) =>
    Object.entries(migration.waivers).flatMap(([rule, reason]) => {
      if (reason.trim().length < SHORTEST_REASON) return [`${migration.file}: the waiver of ${rule} gives no reason (at least ${SHORTEST_REASON} characters)`];
      return broken.has(`${migration.file} ${rule}`) ? [] : [`${migration.file}: waives ${rule}, which it does not break`];
    }),
  );
  return [...unwaived, ...waivers];
}

/** squawk's findings on each migration's SQL, less the rules its kind may break. */
async function lint(migrations: readonly RecordedMigration[]): Promise<Finding[]> {
  if (!existsSync(SQUAWK)) throw new Error(`no squawk binary at ${SQUAWK} (the optional dependency @squawk-cli/linux-x64 is for Linux x64)`);
  const folder = scratchFolder('migration-sql');
  try {
    const scripts = migrations.map((migration, index) => {
      const script = path.join(folder, `${String(index).padStart(4, '0')}.sql`);
      writeFileSync(script, migration.sql);
      return script;
    });
    return [...(await squawk(scripts)), ...scripts.flatMap((script, index) => ownViolations(script, migrations[index]?.sql ?? ''))].flatMap((violation): Finding[] => {
      const migration = migrations[Number(path.basename(violation.file, '.sql'))];
      if (migration === undefined) throw new Error(`squawk named a file it was not given: ${violation.file}`);
      if (migration.kind === 'contract' && CONTRACT_MAY.includes(violation.rule_name)) return [];
      const statement = (migration.sql.split('\n')[violation.line] ?? '').replace(/\s+/g, ' ').trim().slice(0, 120);
      return [{ file: migration.file, rule: violation.rule_name, message: violation.message, statement }];
    });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** Where `sql` breaks one of OWN_RULES, as squawk reports its own (`line` counted from 0, as the statement is looked up). */
function ownViolations(file: string, sql: string): SquawkViolation[] {
  return OWN_RULES.flatMap(({ rule, pattern, message }) =>
    [...sql.matchAll(pattern)].map((match) => ({ file, line: sql.slice(0, match.index).split('\n').length - 1, rule_name: rule, message })),
  );
}

async function squawk(scripts: readonly string[]): Promise<SquawkViolation[]> {
  const args = ['--reporter', 'json', '--pg-version', '15', '--exclude', NOT_APPLIED.join(','), ...scripts];
  const output = await promisify(execFile)(SQUAWK, args, { maxBuffer: 64 * 1024 * 1024 }).then(
    ({ stdout }) => stdout,
    (error: { stdout?: string; code?: number }) => {
      if (error.code === 1 && error.stdout) return error.stdout;
      throw error;
    },
  );
  return JSON.parse(output || '[]') as SquawkViolation[];
}
