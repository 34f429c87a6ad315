import { createSecretKey } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type pino from 'pino';
import { createApp } from './app.ts';
import { IDLE_IN_TRANSACTION_MARGIN_MS, loadConfig, type LoadedConfig, type LoadOptions } from './config/index.ts';
import { createKnex, databaseAddress, isConnectTimeout, queryOnce } from './db/connect.ts';
import { describeBlockers, type LockRetry } from './db/lock-retries.ts';
import { migrateDatabase } from './db/migrations.ts';
import { openDatabase } from './db/open.ts';
import { buildDeclaredIndexes, undeclaredLeft, type BuiltIndex, type IndexBuild } from './documents/index-build.ts';
import { indexNames, type IndexDeclaration } from './documents/index-keys.ts';
import { defaultTenantConnections, NO_TENANT, type StatementTracer, TenantDatabase } from './db/tenant-database.ts';
import { INDEX_STATE, indexStateOf } from './db/concurrent-index.ts';
import type { ShareClass, ShareWaitOutcome } from './db/tenant-shares.ts';
import { type AnswerStall, watchAnswerStalls } from './http/answer-stall.ts';
import type { Pace } from './http/pace.ts';
import { createDrainableServer } from './http/drain.ts';
import { listenOn } from './http/listen.ts';
import { bufferedStdout, createLogger, type Logger } from './logger/index.ts';
import { answerConnect, answerHttp2Preface, answerParserErrors } from './http/node-answers.ts';
import { loadProjects } from './projects/index.ts';
import { Readiness, type Runtime } from './core/runtime.ts';
import { DeclaredIndexPaths } from './documents/declared-index-paths.ts';
import { DocumentShapes } from './documents/statements.ts';
import type { Tracing } from './tracing/tracing.ts';
import { BoundProjectSettings } from './facilities/settings.ts';
import { RateLimitCounters, redisTarget } from './ratelimit/index.ts';
import { startTrashSweeper } from './spaces/index.ts';
import { TenantDirectory } from './tenancy/index.ts';

/** A query of the running service that the database leaves unanswered this long is a 503 (SPEC §7). */
const SERVING_QUERY_TIMEOUT_MS = 1500;

/** What the metrics are told about the database, when they are on. */
interface DatabaseWatch {
  onStatement?: (seconds: number) => void;
  onShareWait?: (shareClass: ShareClass, outcome: ShareWaitOutcome, seconds: number) => void;
}

export interface Service {
  /** `http://host:port` of the listening server. */
  readonly url: string;
  readonly runtime: Runtime;
  readonly server: Server;
  /** Drains (8 s at most, see `createDrainableServer`), then releases everything; once, however often called. */
  close(): Promise<void>;
}

export interface StartOptions extends LoadOptions {
  /** Where log lines go (default stdout). */
  logDestination?: pino.DestinationStream;
  /** How fast request bodies must arrive (default `PACE`); for tests. */
  bodyPace?: Pace;
  /** How long an answer may go unread, checked how often (default `limits.answerStallMs`, every second); for tests. */
  answerStall?: AnswerStall;
  /** How long a query may go unanswered before it is a 503 (default 1.5 s); for tests on a busy machine. */
  queryTimeoutMs?: number;
  /** Traces, when `lib/main.ts` started them (`lib/tracing`): process-wide, so never a test's own. */
  tracing?: Tracing;
}

/** How a runtime uses its database. */
export interface DatabaseOptions {
  /** Run the migrations first (on a connection of their own, without the query time limit). */
  migrate?: boolean;
  /** See `KnexOptions.queryTimeoutMs`: the service sets it, tools leave it out. */
  queryTimeoutMs?: number;
  /** Each statement on tenant data runs through it, when traces are on. */
  traceStatement?: StatementTracer;
}

/** Loads configuration, opens and migrates the database, loads projects, and listens. */
export async function startService(options: StartOptions = {}): Promise<Service> {
  const logDestination = options.logDestination ?? bufferedStdout();
  const runtime = await createRuntime({ ...options, logDestination }, { migrate: true, queryTimeoutMs: options.queryTimeoutMs ?? SERVING_QUERY_TIMEOUT_MS });
  let indexBuild: IndexBuild | undefined;
  try {
    await warnUnlessDocumentIndexUsable(runtime);
    const projects = await loadProjects(runtime);
    indexBuild = await startIndexBuild(runtime, projects.indexes ?? []);
    const app = createApp(runtime, projects, options.bodyPace);
    const handler = answerHttp2Preface(app.callback(), runtime.logger);
    const drainable = createDrainableServer(handler);
    const { server, drain } = drainable;
    // A body's time is the entry's to bound, by its pace (`BodyWatcher`): Node's whole-request limit
    // (300 s) would cut honest uploads, and answers 408 even after the service has answered.
    server.requestTimeout = 0;
    // An answer's is bounded by its silence: the kernel must take some of it every so often (`watchAnswerStalls`).
    watchAnswerStalls(drainable, runtime.logger, options.answerStall ?? { stallMs: runtime.config.limits.answerStallMs, checkMs: 1000 });
    answerParserErrors(server, runtime.logger);
    answerConnect(server, handler);
    await listenOn(server, runtime.config.host, runtime.config.port);
    const { port } = server.address() as AddressInfo;
    const url = `http://${runtime.config.host.includes(':') ? `[${runtime.config.host}]` : runtime.config.host}:${port}`;
    runtime.logger.info({ url }, 'spaceport listening');
    const { trashDays, purgeIntervalMs } = runtime.config.spaces;
    const sweeper = startTrashSweeper({ database: runtime.tenantDatabase, trashDays, intervalMs: purgeIntervalMs, logger: runtime.logger });
    return { url, runtime, server, close: closeOnce(() => Promise.all([drain(), sweeper.stop()]), runtime, indexBuild) };
  } catch (error) {
    await indexBuild?.stop();
    await releaseRuntime(runtime);
    throw error;
  }
}

/**
 * Everything the service shares, without HTTP (the CLI uses it too); what needs closing registers
 * its closing as it is made.
 */
export async function createRuntime(options: StartOptions = {}, database: DatabaseOptions = {}): Promise<Runtime> {
  const loaded = loadConfig(options);
  const { config, secrets } = loaded;
  const { tracing } = options;
  const logger = createLogger(config.logLevel, options.logDestination, tracing?.logFields);
  const shutdownTasks: Array<() => Promise<void>> = [];
  // Registered first, so closed last: the spans of the drain and of the closing are sent too.
  if (tracing !== undefined) shutdownTasks.push(() => tracing.shutdown());
  // Without a token nothing is recorded: no registry, no observation on any path, and prom-client
  // (which loads OpenTelemetry's API for its exemplars) is never imported.
  const metrics = secrets.metricsToken === undefined ? undefined : new (await import('./metrics/index.ts')).ServiceMetrics();
  const statementWatch = { onStatement: metrics?.statementRan, onShareWait: metrics?.shareWaited, traceStatement: tracing?.traceStatement };
  const { knex, tenantDatabase, sessionUrl } = await openDatabases(loaded, logger, { ...database, ...statementWatch }, shutdownTasks);
  metrics?.watchPool(() => ({ ...tenantDatabase.poolCounts(), ...tenantDatabase.shareCounts() }));
  const declaredPaths = new DeclaredIndexPaths();
  metrics?.watchUnbuiltIndexes(() => declaredPaths.unbuilt().length);
  const rateCounters = new RateLimitCounters(redisTarget(secrets), logger);
  shutdownTasks.push(() => rateCounters.close());
  return {
    config,
    secrets,
    knex,
    sessionUrl,
    tenantDatabase,
    logger,
    tenants: new TenantDirectory(tenantDatabase),
    rateCounters,
    metrics,
    readiness: new Readiness(),
    projectSettings: new BoundProjectSettings(),
    declaredPaths,
    documentShapes: new DocumentShapes(),
    jwtKey: createSecretKey(Buffer.from(secrets.jwtSecret, 'utf8')),
    tracing,
    shutdownTasks: Object.freeze(shutdownTasks),
  };
}

/** The database (`openDatabase`), migrated when asked, with the owner's knex and the tenant pool over it. */
async function openDatabases(
  loaded: LoadedConfig,
  logger: Logger,
  database: DatabaseOptions & DatabaseWatch,
  shutdownTasks: Array<() => Promise<void>>,
): Promise<Pick<Runtime, 'knex' | 'tenantDatabase' | 'sessionUrl'>> {
  const log = (message: unknown) => logger.debug({ knex: String(message) }, 'knex');
  const opened = await openDatabase(loaded, (line) => logger.warn(line));
  shutdownTasks.push(() => opened.stop());
  // Migrations and tools hold a session (the migration lock): never through a transaction pooler.
  const sessionUrl = loaded.secrets.databaseDirectUrl ?? opened.url;
  const { connectTimeoutMs } = loaded.config.database;
  const namingTimeout = (error: unknown) => connectTimeoutNamed(error, sessionUrl, connectTimeoutMs);
  if (database.migrate) {
    // A lock that does not come is retried (lib/db/lock-retries.ts): each attempt in vain is a warning naming its holder.
    const onRetry = (retry: LockRetry) => logger.warn({ attempt: retry.attempt, of: retry.attempts, blockers: describeBlockers(retry.blockers) }, `${retry.label}: lock not available, trying again`);
    await migrateDatabase(sessionUrl, { log, onRetry, connectTimeoutMs }).catch(async (error: unknown) => {
      await runShutdownTasks(shutdownTasks, logger);
      throw namingTimeout(error);
    });
  }
  const knex = createKnex(sessionUrl, { log, queryTimeoutMs: database.queryTimeoutMs, connectTimeoutMs });
  shutdownTasks.push(() => knex.destroy());
  const citus = await onCitus(sessionUrl, connectTimeoutMs).catch((error: unknown) => {
    throw namingTimeout(error);
  });
  const scopeForm = citus ? 'citus' : 'statement';
  if (scopeForm === 'citus') logger.info('database: a Citus coordinator; each statement takes its scope with SET LOCAL in a transaction block');
  const { poolMax, preparedStatements } = loaded.config.database;
  const { tenantConnections, queueMs, handlerMs, resultBytes } = loaded.config.limits;
  const tenantDatabase = new TenantDatabase(opened.url, {
    // Behind a pooler the health checks ask the database on this direct connection, and the pooler only to
    // log a client in and not refuse it: a pooler busy with tenants' transactions is not an unready instance.
    sessionUrl,
    scopeForm,
    queryTimeoutMs: database.queryTimeoutMs,
    maxResultBytes: resultBytes,
    poolMax,
    connectTimeoutMs,
    tenantConnections: tenantConnections ?? defaultTenantConnections(poolMax),
    queueMs,
    // A transaction never outlives its request, which never outlives the handler's limit: idle
    // longer than that, its process has stopped without its connection closing (SPEC §17.1).
    idleInTransactionMs: handlerMs + IDLE_IN_TRANSACTION_MARGIN_MS,
    shardMoveWaitMs: handlerMs,
    onShareWait: database.onShareWait,
    onIdleError: (error) => logger.warn({ error: error.message }, 'database connection lost while idle'),
    preparedStatements,
    onUnprepared: () => logger.info('database: its connections keep no prepared statement (a transaction-mode pooler without them); every statement is parsed with each use'),
    onStatement: database.onStatement,
    traceStatement: database.traceStatement,
  });
  shutdownTasks.push(() => tenantDatabase.close());
  return { knex, tenantDatabase, sessionUrl };
}

/** pg's "timeout expired" names neither the database nor the setting that would give it longer. */
function connectTimeoutNamed(error: unknown, url: string, connectTimeoutMs: number): unknown {
  if (!isConnectTimeout(error)) return error;
  return new Error(`database ${databaseAddress(url)} did not answer within ${connectTimeoutMs} ms (DATABASE_CONNECT_TIMEOUT_MS): is it running and reachable? Raise DATABASE_CONNECT_TIMEOUT_MS if it is far or busy`);
}

/** Whether the database is a Citus coordinator (the `citus` extension), detected at start-up (`queryOnce`: no request's time limit). */
async function onCitus(sessionUrl: string, connectTimeoutMs: number): Promise<boolean> {
  return (await queryOnce(sessionUrl, connectTimeoutMs, "select from pg_extension where extname = 'citus'")).length > 0;
}

/** The fix is a DBA's to make: the service works without it, with slower field filters. */
async function warnUnlessDocumentIndexUsable(runtime: Runtime): Promise<void> {
  if (await runtime.tenantDatabase.documentIndexUsable()) return;
  runtime.logger.warn(
    'document field filters cannot use the GIN index under row-level security (the @? operator is not marked leakproof in this database): ' +
      'as a superuser, run ALTER FUNCTION pg_catalog.jsonb_path_exists_opr(jsonb, jsonpath) LEAKPROOF',
  );
}

/**
 * Builds the declared indexes behind the listening service: a build over many documents takes a
 * while, and queries answer meanwhile, only slower. Indexes of removed declarations are dropped.
 */
async function startIndexBuild(runtime: Runtime, declarations: readonly IndexDeclaration[]): Promise<IndexBuild | undefined> {
  const { sessionUrl, config } = runtime;
  if (declarations.length === 0 && !(await undeclaredLeft(sessionUrl, declarations, config.database.connectTimeoutMs))) return undefined;
  const build = buildDeclaredIndexes(sessionUrl, declarations, runtime.logger, config.database.connectTimeoutMs);
  build.done.then(
    (built) => refuseUnguardedWrites(runtime, declarations, built),
    (error: unknown) => runtime.logger.error({ error: (error as Error).message }, 'declared indexes could not be built'),
  );
  return build;
}

/**
 * A declared unique index that could not be built: writes to its collection are refused
 * (`UnguardedWriteError`), and it is named in the log, `/readyz` and the metrics.
 */
function refuseUnguardedWrites(runtime: Runtime, declarations: readonly IndexDeclaration[], built: readonly BuiltIndex[]): void {
  const failed = new Set(built.filter(({ outcome }) => outcome === 'failed').map(({ name }) => name));
  for (const declaration of declarations) {
    const index = indexNames(declaration).unique;
    if (index === undefined || !failed.has(index)) continue;
    const { project, collection } = declaration;
    // Another instance's start may build it, once the duplicates are gone: asked again every 2 s while writes come.
    const isBuilt = async () => {
      const { rows } = await runtime.tenantDatabase.query<{ valid: boolean }>(NO_TENANT, { sql: INDEX_STATE.replace('?', '$1'), bindings: [index] });
      return indexStateOf(rows) === 'valid';
    };
    runtime.declaredPaths.markUnbuilt({ project, collection, index }, isBuilt);
    runtime.logger.error({ project, collection, index }, `declared unique index could not be built (the error above says why; most often, documents already break it): writes to "${collection}" are refused until an instance's next start builds it`);
  }
}

export function releaseRuntime(runtime: Runtime): Promise<void> {
  return runShutdownTasks(runtime.shutdownTasks, runtime.logger);
}

async function runShutdownTasks(tasks: Runtime['shutdownTasks'], logger: Logger): Promise<void> {
  for (const task of [...tasks].reverse()) {
    await task().catch((error: unknown) => logger.error({ err: error }, 'shutdown task failed'));
  }
}

/** `/readyz` answers 503 from the first call on, on the connections still open. */
function closeOnce(drain: () => Promise<unknown>, runtime: Runtime, indexBuild: IndexBuild | undefined): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    runtime.readiness.beginDraining();
    // A build cut short leaves an invalid index, rebuilt at the next start.
    closing ??= Promise.all([drain(), indexBuild?.stop()]).then(() => releaseRuntime(runtime));
    return closing;
  };
}
