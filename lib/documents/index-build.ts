import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { CONNECT_TIMEOUT_MS } from '../db/connect.ts';
import { indexNames, indexStatement, uniqueIndexStatement, type IndexDeclaration } from './index-keys.ts';

/**
 * Builds the indexes projects declare (SPEC §9.4) without blocking reads or writes: `create index
 * concurrently`, which cannot run inside a transaction, on a session connection of its own
 * (`DATABASE_DIRECT_URL` when set: a transaction-mode pooler would hand the session's statements,
 * and its advisory lock, to different server connections).
 *
 * One instance at a time: instances starting together take turns on a session advisory lock, and
 * the later ones find the indexes built (`if not exists`). They wait with `pg_try_advisory_lock`
 * rather than `pg_advisory_lock`: a concurrent build waits for every transaction older than its
 * own snapshot, a blocked `pg_advisory_lock` statement among them, which would deadlock.
 * A build that failed or was cut short leaves an INVALID index behind: it is dropped and rebuilt.
 */

/** An arbitrary constant, not the migrations' own (lib/db/migrations.ts). */
const BUILD_LOCK_KEY = 7_361_504_202;
const LOCK_RETRY_MS = 250;

/** The functions the key expressions use: leakproof, or the indexes serve no filter under row-level security. */
const KEY_FUNCTIONS = [
  'pg_catalog.jsonb_typeof(jsonb)',
  'pg_catalog.jsonb_extract_path(jsonb, text[])',
  'pg_catalog.jsonb_extract_path_text(jsonb, text[])',
  'pg_catalog.jsonb_eq(jsonb, jsonb)',
  'pg_catalog.jsonb_lt(jsonb, jsonb)',
  'pg_catalog.jsonb_le(jsonb, jsonb)',
  'pg_catalog.jsonb_gt(jsonb, jsonb)',
  'pg_catalog.jsonb_ge(jsonb, jsonb)',
];

/** What a build tells the log. */
export interface BuildLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** What happened to one index. */
export interface BuiltIndex {
  readonly name: string;
  readonly outcome: 'present' | 'built' | 'rebuilt' | 'failed';
}

/** A build under way: `done` settles when it ends; `stop` cuts it short (its index is rebuilt at the next start). */
export interface IndexBuild {
  readonly done: Promise<readonly BuiltIndex[]>;
  stop(): Promise<void>;
}

/** Starts building `declarations`' indexes on the database at `sessionUrl`. */
export function buildDeclaredIndexes(sessionUrl: string, declarations: readonly IndexDeclaration[], log: BuildLog): IndexBuild {
  const client = new pg.Client({ connectionString: sessionUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // A connection lost mid-build fails the build's statement; the event itself must not end the process.
  client.on('error', () => {});
  let stopped = false;
  const done = (async () => {
    await client.connect();
    try {
      await warnUnlessLeakproof(client, log);
      if (!(await takeLock(client, () => stopped))) return [];
      const built: BuiltIndex[] = [];
      for (const declaration of declarations) {
        for (const [name, statement] of indexStatements(declaration)) {
          if (stopped) return built;
          built.push(await buildOne(client, name, statement, log));
        }
      }
      return built;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return {
    done,
    stop: async () => {
      stopped = true;
      // Ending the session ends a build under way with it, and frees the lock.
      await client.end().catch(() => undefined);
      await done.catch(() => undefined);
    },
  };
}

function indexStatements(declaration: IndexDeclaration): Array<[string, string]> {
  const names = indexNames(declaration);
  const statements: Array<[string, string]> = [[names.query, indexStatement(names.query, declaration)]];
  if (names.unique !== undefined) statements.push([names.unique, uniqueIndexStatement(names.unique, declaration)]);
  return statements;
}

async function takeLock(client: pg.Client, stopped: () => boolean): Promise<boolean> {
  while (!stopped()) {
    const { rows } = await client.query<{ taken: boolean }>('select pg_try_advisory_lock($1) as taken', [BUILD_LOCK_KEY]);
    if (rows[0]?.taken === true) return true;
    await sleep(LOCK_RETRY_MS);
  }
  return false;
}

async function buildOne(client: pg.Client, name: string, statement: string, log: BuildLog): Promise<BuiltIndex> {
  const state = await indexState(client, name);
  if (state === 'valid') return { name, outcome: 'present' };
  if (state === 'invalid') {
    log.warn({ index: name }, 'declared index left invalid by an earlier build: dropping it to build it again');
    await client.query(`drop index concurrently if exists ${name}`);
  }
  const started = performance.now();
  log.info({ index: name }, 'building declared index (reads and writes go on meanwhile)');
  try {
    await client.query(statement);
  } catch (error) {
    // Only the message: a unique index's detail names the duplicated values.
    log.error({ index: name, error: (error as Error).message }, 'declared index could not be built');
    // A failed unique build would go on enforcing uniqueness half-way: it goes.
    await client.query(`drop index concurrently if exists ${name}`).catch(() => undefined);
    return { name, outcome: 'failed' };
  }
  log.info({ index: name, ms: Math.round(performance.now() - started) }, 'declared index built');
  return { name, outcome: state === 'invalid' ? 'rebuilt' : 'built' };
}

async function indexState(client: pg.Client, name: string): Promise<'valid' | 'invalid' | 'absent'> {
  const { rows } = await client.query<{ valid: boolean }>(
    "select i.indisvalid and i.indisready as valid from pg_index i join pg_class c on c.oid = i.indexrelid where c.relname = $1 and i.indrelid = 'documents'::regclass",
    [name],
  );
  if (rows.length === 0) return 'absent';
  return rows[0]?.valid === true ? 'valid' : 'invalid';
}

async function warnUnlessLeakproof(client: pg.Client, log: BuildLog): Promise<void> {
  const { rows } = await client.query<{ name: string }>('select oid::regprocedure::text as name from pg_proc where oid = any($1::regprocedure[]) and not proleakproof', [KEY_FUNCTIONS]);
  if (rows.length === 0) return;
  const statements = rows.map(({ name }) => `ALTER FUNCTION ${name} LEAKPROOF;`).join(' ');
  log.warn({}, `declared indexes serve sorts but not filters under row-level security (their functions are not marked leakproof in this database): as a superuser, run ${statements}`);
}
