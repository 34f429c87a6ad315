import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { CONNECT_TIMEOUT_MS, queryOnce } from '../db/connect.ts';
import { INDEX_STATE, indexStateOf, type IndexState } from '../db/concurrent-index.ts';
import { indexNames, indexStatement, uniqueIndexStatement, type IndexDeclaration } from './index-keys.ts';

/**
 * Declared indexes (SPEC §9.4) are built `concurrently` on a session connection of their own (`DATABASE_DIRECT_URL`
 * when set: a transaction-mode pooler would scatter the session and its advisory lock), one instance at a time under
 * `pg_try_advisory_lock`: a concurrent build waits for every older transaction, a blocked `pg_advisory_lock` among them.
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

export interface BuildLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface BuiltIndex {
  readonly name: string;
  readonly outcome: 'present' | 'built' | 'rebuilt' | 'failed';
}

/** A build under way: `done` gives what it did once it ends; `stop` cuts it short (an index cut short is rebuilt at the next start). */
export interface IndexBuild {
  readonly done: Promise<readonly BuiltIndex[]>;
  stop(): Promise<void>;
}

export function buildDeclaredIndexes(sessionUrl: string, declarations: readonly IndexDeclaration[], log: BuildLog, connectTimeoutMs = CONNECT_TIMEOUT_MS): IndexBuild {
  const client = new pg.Client({ connectionString: sessionUrl, connectionTimeoutMillis: connectTimeoutMs });
  // A connection lost mid-build fails the build's statement; the event itself must not end the process.
  client.on('error', () => {});
  let stopped = false;
  const session = client.connect().then(async () => (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid);
  const done = (async () => {
    await session;
    try {
      if (declarations.length > 0) await warnUnlessLeakproof(client, log);
      if (!(await takeLock(client, () => stopped))) return [];
      const built: BuiltIndex[] = [];
      for (const declaration of declarations) {
        for (const [name, statement] of indexStatements(declaration)) {
          if (stopped) return built;
          const outcome = await buildOne(client, name, statement, log).catch((error: unknown) => {
            if (stopped && isCancelled(error)) return undefined;
            throw error;
          });
          if (outcome === undefined) return built;
          built.push(outcome);
        }
      }
      if (!stopped) await dropUndeclared(client, declarations, log);
      // Ending the session frees the lock too; not so through a pooler that keeps the server connection.
      await client.query('select pg_advisory_unlock($1)', [BUILD_LOCK_KEY]);
      return built;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return {
    done,
    stop: async () => {
      stopped = true;
      // A build under way is cancelled: closing its connection would not end it. Again until it
      // ends, as a cancel that comes before the statement starts cancels nothing.
      const pid = await session.catch(() => undefined);
      let ended = false;
      const ending = done.catch(() => undefined).then(() => {
        ended = true;
      });
      while (pid !== undefined && !ended) {
        await cancelBackend(sessionUrl, pid, connectTimeoutMs);
        await Promise.race([ending, sleep(LOCK_RETRY_MS)]);
      }
      await ending;
    },
  };
}

/** Cancels the statement of backend `pid`, from a connection of its own; a build cancelled this way leaves an invalid index. */
async function cancelBackend(sessionUrl: string, pid: number, connectTimeoutMs: number): Promise<void> {
  // The database gone: so is the build.
  await queryOnce(sessionUrl, connectTimeoutMs, 'select pg_cancel_backend($1)', [pid]).catch(() => undefined);
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
    if (isCancelled(error)) throw error;
    // Only the message: a unique index's detail names the duplicated values.
    log.error({ index: name, error: (error as Error).message }, 'declared index could not be built');
    // A failed unique build would go on enforcing uniqueness half-way: it goes.
    await client.query(`drop index concurrently if exists ${name}`).catch(() => undefined);
    return { name, outcome: 'failed' };
  }
  log.info({ index: name, ms: Math.round(performance.now() - started) }, 'declared index built');
  return { name, outcome: state === 'invalid' ? 'rebuilt' : 'built' };
}

const UNDECLARED_INDEXES =
  "select c.relname as name from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = 'documents'::regclass and (c.relname like 'doci\\_%' or c.relname like 'docu\\_%') and c.relname <> all(?)";
const PATH_STATISTICS = "select stxname as name from pg_statistic_ext where stxrelid = 'documents'::regclass and stxname like 'docs\\_%'";

/**
 * Whether the database holds declared indexes or statistics that none of `declarations` names: a build without
 * declarations is then still due. Asked at start-up, without a request's time limit (`queryOnce`).
 */
export async function undeclaredLeft(sessionUrl: string, declarations: readonly IndexDeclaration[], connectTimeoutMs: number): Promise<boolean> {
  const statement = `select exists (${UNDECLARED_INDEXES.replace('?', '$1')}) or exists (${PATH_STATISTICS}) as "left"`;
  const [row] = await queryOnce<{ left: boolean }>(sessionUrl, connectTimeoutMs, statement, [declaredNames(declarations)]);
  return row?.left === true;
}

function declaredNames(declarations: readonly IndexDeclaration[]): string[] {
  return declarations.flatMap((declaration) => Object.values(indexNames(declaration)).filter((name) => name !== undefined));
}

/**
 * Also drops the statistics objects (`docs_`) earlier releases made for declared paths: each cost the planning of every
 * statement on documents. An instance of the release before (a rolling upgrade) answers the same without them, slower.
 */
async function dropUndeclared(client: pg.Client, declarations: readonly IndexDeclaration[], log: BuildLog): Promise<void> {
  const { rows: indexes } = await client.query<{ name: string }>(UNDECLARED_INDEXES.replace('?', '$1'), [declaredNames(declarations)]);
  for (const { name } of indexes) {
    await client.query(`drop index concurrently if exists ${name}`);
    log.info({ index: name }, 'dropped an index no declaration names any more');
  }
  const { rows: statistics } = await client.query<{ name: string }>(PATH_STATISTICS);
  for (const { name } of statistics) {
    await client.query(`drop statistics if exists ${name}`);
    log.info({ statistics: name }, 'dropped statistics objects of declared paths (they slowed the planning of every statement)');
  }
}

/** `query_canceled`: the build was stopped (`stop`), not refused. */
function isCancelled(error: unknown): boolean {
  return (error as { code?: unknown }).code === '57014';
}

async function indexState(client: pg.Client, name: string): Promise<IndexState> {
  return indexStateOf((await client.query<{ valid: boolean }>(INDEX_STATE.replace('?', '$1'), [name])).rows);
}

async function warnUnlessLeakproof(client: pg.Client, log: BuildLog): Promise<void> {
  const { rows } = await client.query<{ name: string }>('select oid::regprocedure::text as name from pg_proc where oid = any($1::regprocedure[]) and not proleakproof', [KEY_FUNCTIONS]);
  if (rows.length === 0) return;
  const statements = rows.map(({ name }) => `ALTER FUNCTION ${name} LEAKPROOF;`).join(' ');
  log.warn({}, `declared indexes serve sorts but not filters under row-level security (their functions are not marked leakproof in this database): as a superuser, run ${statements}`);
}
