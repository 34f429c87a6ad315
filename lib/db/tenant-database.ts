import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { BackendWatchdog } from './backend-watchdog.ts';
import { CONNECT_TIMEOUT_MS, isConnectionLost, isReusable } from './connect.ts';
import { queryInScope, type ScopeForm, type StatementScope } from './scoped-query.ts';
import { StatementLimit } from './statement-limit.ts';
import type { Statement } from './statement.ts';
import { type ShareClass, type ShareCounts, type ShareWaitOutcome, TenantShares } from './tenant-shares.ts';

/**
 * The role every statement on tenant data runs as (SPEC §4.2): it has no BYPASSRLS and owns no
 * table, so the row-level security policies of the tenant tables always apply to it, even when
 * DATABASE_URL names a superuser. The migration `..._row_level_security` creates and grants it.
 */
export const TENANT_ROLE = 'spaceport_tenant';

/** The setting the policies compare each row's `tenant` with, set for each statement's transaction. */
export const TENANT_SETTING = 'spaceport.tenant';

/**
 * How long after its time limit a statement may still be answered before its connection is cut:
 * PostgreSQL's own cancellation normally answers first (so the statement's work ends there, and
 * a write is rolled back); the cut is for a database that does not answer at all.
 */
const UNANSWERED_GRACE_MS = 200;

/** What a statement is run for: a tenant's rows, or `NO_TENANT` (the tenants table, health). */
export type SessionTenant = string | typeof NO_TENANT;
export const NO_TENANT = '';

/** A transaction whose request ended (answered, its client gone, its time limit) before it could commit: rolled back. */
export class TransactionGivenUp extends Error {
  override name = 'TransactionGivenUp';
  constructor() {
    super('the request ended (answered, its client gone, or its time limit reached) before this transaction could commit: rolled back');
  }
}

/**
 * A statement that waited for its tenant's share while the database stopped answering another
 * statement of that tenant: refused at once (SPEC §7), rather than given a connection to the
 * same silent database after its wait. SQLSTATE 08006, connection failure: a 503 like the
 * statement it followed.
 */
export class DatabaseStoppedAnswering extends Error {
  override name = 'DatabaseStoppedAnswering';
  readonly code = '08006';
  constructor(cause: unknown) {
    super('the database stopped answering: a statement waiting for a connection was refused', { cause });
  }
}

/** How long a statement that meets a shard move is tried again unless configured: `limits.handlerMs`' default. */
const DEFAULT_SHARD_MOVE_WAIT_MS = 30_000;

/** How long a statement over its tenant's share waits for one of its connections, unless configured (`limits.queueMs`). */
const DEFAULT_QUEUE_MS = 2000;

/**
 * How long PostgreSQL lets a transaction of this pool sit idle before it ends its session
 * (`idle_in_transaction_session_timeout`), unless configured: the backstop for a process that
 * stops mid-transaction without its connection closing (frozen, cut off), when the service's
 * own rollback at the end of each request cannot run.
 */
const DEFAULT_IDLE_IN_TRANSACTION_MS = 60_000;

/** Half the pool, at least one connection: a tenant's share unless `limits.tenantConnections` says otherwise. */
export function defaultTenantConnections(poolMax: number): number {
  return Math.max(1, Math.floor(poolMax / 2));
}

/**
 * Runs one statement, `send`, whose text is `sql`: how traces follow statements (`lib/tracing`).
 * The text has no values in it: every value is bound.
 */
export type StatementTracer = <Result>(sql: string, send: () => Promise<Result>) => Promise<Result>;

/** How far apart a statement or transaction that met a Citus shard split or move is tried again. */
const SHARD_MOVE_PAUSE_MS = 200;

/**
 * Whether Citus refused `error` because of a shard split or move, so that nothing of it was
 * done and a later try can succeed: the shard it needed was just split or moved (SQLSTATE 40001,
 * "shard for the given value does not exist"), or, on a Citus coordinator, a lock it waited for
 * longer than its `lock_timeout` (55P03), as a write does while a split or move with
 * `block_writes` holds its shard. Never raised by plain PostgreSQL's statements here.
 */
function metShardMove(error: unknown, scopeForm: ScopeForm): boolean {
  const { code, message } = error as { code?: string; message?: string };
  if (code === '55P03') return scopeForm === 'citus';
  return code === '40001' && message?.startsWith('shard for the given value does not exist') === true;
}

/** Runs `work` again, `SHARD_MOVE_PAUSE_MS` apart, while it meets a shard move and `waitMs` has not passed since the first try. */
async function retriedOverShardMoves<Result>(scopeForm: ScopeForm, waitMs: number, work: () => Promise<Result>): Promise<Result> {
  const started = performance.now();
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (!metShardMove(error, scopeForm) || performance.now() - started + SHARD_MOVE_PAUSE_MS >= waitMs) throw error;
      await new Promise((resolve) => setTimeout(resolve, SHARD_MOVE_PAUSE_MS));
    }
  }
}

/** Runs one statement of a transaction on its connection. */
export type TransactionStatement = (statement: Statement) => Promise<pg.QueryResult>;

export interface TenantDatabaseOptions {
  /**
   * The time limit of every statement: PostgreSQL cancels a statement that runs longer (its
   * `statement_timeout`), so the work ends and a write rolls back; a statement whose answer has
   * not come shortly after that has its connection cut. Either fails as "database unreachable"
   * (see `isDatabaseUnreachable`).
   */
  queryTimeoutMs?: number;
  /** How many connections the pool opens at most (`DATABASE_POOL_MAX`). */
  poolMax?: number;
  /** Connections one tenant's statements may hold at once (`limits.tenantConnections`); default half the pool, at least 1. */
  tenantConnections?: number;
  /** How long a statement over its tenant's share waits before it is refused with a 503 (`limits.queueMs`). */
  queueMs?: number;
  /** Told of each wait for a tenant's share once it ends, by class (never by tenant), for the metrics. */
  onShareWait?: (shareClass: ShareClass, outcome: ShareWaitOutcome, seconds: number) => void;
  /** PostgreSQL's `idle_in_transaction_session_timeout` for this pool's transactions, set with each of them. */
  idleInTransactionMs?: number;
  /** The wait for a new connection (`DATABASE_CONNECT_TIMEOUT_MS`); `CONNECT_TIMEOUT_MS` unless given. */
  connectTimeoutMs?: number;
  /** Where a connection that fails while idle in the pool is reported. */
  onIdleError?: (error: Error) => void;
  /** Told how long each statement took, in seconds, once it is answered or fails (the metrics). */
  onStatement?: (seconds: number) => void;
  /** Each statement runs through it, when traces are on. */
  traceStatement?: StatementTracer;
  /** How each statement takes its scope: `citus` on a Citus coordinator (SPEC §15.4). */
  scopeForm?: ScopeForm;
  /**
   * How long a statement or transaction that meets a Citus shard split or move keeps being tried
   * again: the request's own limit (`limits.handlerMs`), so a write held by a move waits for it
   * instead of failing; 30 s unless given.
   */
  shardMoveWaitMs?: number;
}

/** The pool's connections now, as `pg.Pool` counts them. */
export interface PoolCounts {
  readonly total: number;
  readonly idle: number;
  /** Callers waiting for a connection. */
  readonly waiting: number;
}

/**
 * The pool that runs every statement on tenant data. Each statement carries its own scope, the
 * restricted role, its tenant and its time limit, set for its transaction alone and sent with it
 * in one exchange (`queryInScope`): no statement depends on a setting an earlier one left on a
 * connection, so the answers are the same on a direct connection and through a transaction-mode
 * pooler, which hands each transaction to whichever server connection is free (SPEC §15.2).
 */
export class TenantDatabase {
  readonly #pool: pg.Pool;
  /** One connection of its own for the health checks, which no tenant's statement can take (SPEC §17.2). */
  readonly #reserved: pg.Pool;
  readonly #shares: TenantShares;
  readonly #limit: StatementLimit | undefined;
  readonly #statementTimeout: string;
  readonly #idleInTransactionTimeout: string;
  readonly #onStatement: ((seconds: number) => void) | undefined;
  readonly #traceStatement: StatementTracer | undefined;
  readonly #scopeForm: ScopeForm;
  readonly #shardMoveWaitMs: number;
  /** `spaceport/<this pool>/`: the start of its statements' tags, unique to it on the server. */
  readonly #tagPrefix = `spaceport/${randomBytes(4).toString('hex')}/`;
  #tagsGiven = 0;

  constructor(url: string, options: TenantDatabaseOptions = {}) {
    const { queryTimeoutMs, poolMax = 10, connectTimeoutMs = CONNECT_TIMEOUT_MS, onIdleError = () => {}, onStatement, traceStatement, scopeForm = 'statement' } = options;
    this.#scopeForm = scopeForm;
    this.#shardMoveWaitMs = options.shardMoveWaitMs ?? DEFAULT_SHARD_MOVE_WAIT_MS;
    this.#onStatement = onStatement;
    this.#traceStatement = traceStatement;
    this.#limit = queryTimeoutMs === undefined ? undefined : new StatementLimit(queryTimeoutMs + UNANSWERED_GRACE_MS, new BackendWatchdog(url, connectTimeoutMs));
    this.#statementTimeout = String(queryTimeoutMs ?? 0);
    this.#idleInTransactionTimeout = String(options.idleInTransactionMs ?? DEFAULT_IDLE_IN_TRANSACTION_MS);
    this.#shares = new TenantShares({
      perTenant: options.tenantConnections ?? defaultTenantConnections(poolMax),
      queueMs: options.queueMs ?? DEFAULT_QUEUE_MS,
      onWait: options.onShareWait,
    });
    this.#pool = newPool(url, poolMax, connectTimeoutMs, onIdleError);
    this.#reserved = newPool(url, 1, connectTimeoutMs, onIdleError);
  }

  /** Runs `statement` for `tenant`: PostgreSQL shows it that tenant's rows and no other. */
  query<Row extends pg.QueryResultRow = pg.QueryResultRow>(tenant: SessionTenant, statement: Statement): Promise<pg.QueryResult<Row>> {
    const scope = this.#scope(tenant);
    return retriedOverShardMoves(this.#scopeForm, this.#shardMoveWaitMs, () =>
      this.#withConnection(tenant, (client) => this.#watched(client, statement.sql, scope.tag, () => queryInScope<Row>(client, scope, statement.sql, [...statement.bindings], this.#scopeForm))),
    );
  }

  /**
   * Runs `work` in one transaction for `tenant`; it commits when `work` resolves, else rolls back.
   * Once `stillWanted` says no (checked before each statement and before the commit), the next
   * of them fails with `TransactionGivenUp` instead, and the transaction rolls back.
   */
  transaction<Result>(tenant: string, work: (run: TransactionStatement) => Promise<Result>, stillWanted: () => boolean = () => true): Promise<Result> {
    const wanted = () => {
      if (!stillWanted()) throw new TransactionGivenUp();
    };
    const scope = this.#scope(tenant);
    return retriedOverShardMoves(this.#scopeForm, this.#shardMoveWaitMs, () => this.#withConnection(tenant, async (client) => {
      // The wait for a connection may have outlasted the request.
      wanted();
      await this.#watched(client, 'begin', scope.tag, () => queryInScope(client, scope, 'begin', [], this.#scopeForm));
      // The statement last sent: a request that ended may leave it running when the rollback is due.
      let last: Promise<unknown> = Promise.resolve();
      try {
        const result = await work((statement) => {
          wanted();
          const answered = this.#watched(client, statement.sql, scope.tag, () => client.query(statement.sql, [...statement.bindings]));
          last = answered;
          return answered;
        });
        wanted();
        await this.#watched(client, 'commit', scope.tag, () => client.query('commit'));
        return result;
      } catch (error) {
        // A statement still running (waiting on a lock, say) would hold the rollback up to its
        // limit: it is cancelled, and the rollback is sent once it has ended.
        if (error instanceof TransactionGivenUp) this.#limit?.endRunning(client);
        await last.catch(() => undefined);
        await this.#watched(client, 'rollback', scope.tag, () => client.query('rollback')).catch(() => undefined);
        throw error;
      }
    }));
  }

  /**
   * Whether field filters can use the document index under row-level security: the `@?`
   * operator must be marked leakproof, which only a superuser can do (migration
   * `..._row_level_security`). Also proves at start-up that the restricted role can be taken.
   */
  async documentIndexUsable(): Promise<boolean> {
    const { rows } = await this.query<{ usable: boolean }>(NO_TENANT, {
      sql: "select proleakproof as usable from pg_proc where oid = 'pg_catalog.jsonb_path_exists_opr(jsonb, jsonpath)'::regprocedure",
      bindings: [],
    });
    return rows[0]?.usable === true;
  }

  /**
   * Resolves once the database answers a `select 1` on the reserved connection, which no
   * tenant's statement can take: readiness reports the database, not one tenant's load.
   */
  async answers(): Promise<void> {
    await onConnectionOf(this.#reserved, (client) => this.#limited(client, undefined, () => client.query('select 1')));
  }

  poolCounts(): PoolCounts {
    return { total: this.#pool.totalCount, idle: this.#pool.idleCount, waiting: this.#pool.waitingCount };
  }

  /** Tenants using their whole share of the pool now, and statements waiting in tenants' queues. */
  shareCounts(): ShareCounts {
    return this.#shares.counts();
  }

  async close(): Promise<void> {
    this.#limit?.stop();
    await Promise.all([this.#pool.end(), this.#reserved.end()]);
  }

  /** A statement's scope, or a transaction's, with a tag of its own (`BackendWatchdog`). */
  #scope(tenant: SessionTenant): StatementScope {
    this.#tagsGiven += 1;
    return {
      role: TENANT_ROLE,
      tenantSetting: TENANT_SETTING,
      tenant,
      statementTimeout: this.#statementTimeout,
      tag: `${this.#tagPrefix}${this.#tagsGiven}`,
      idleInTransactionTimeout: this.#idleInTransactionTimeout,
    };
  }

  #watched<Result>(client: pg.PoolClient, sql: string, tag: string, send: () => Promise<Result>): Promise<Result> {
    const run = () => this.#limited(client, tag, send);
    const onStatement = this.#onStatement;
    const started = onStatement === undefined ? 0 : performance.now();
    const answered = this.#traceStatement === undefined ? run() : this.#traceStatement(sql, run);
    if (onStatement === undefined) return answered;
    const observe = () => onStatement((performance.now() - started) / 1000);
    answered.then(observe, observe);
    return answered;
  }

  #limited<Result>(client: pg.PoolClient, tag: string | undefined, send: () => Promise<Result>): Promise<Result> {
    return this.#limit === undefined ? send() : this.#limit.watch(client, send, tag);
  }

  /** Runs `work` on a connection of the pool, within `tenant`'s share of it (SPEC §17.2). */
  async #withConnection<Result>(tenant: SessionTenant, work: (client: pg.PoolClient) => Promise<Result>): Promise<Result> {
    const taken = this.#shares.take(tenant);
    const releaseShare = typeof taken === 'function' ? taken : await taken;
    try {
      return await onConnectionOf(this.#pool, work);
    } catch (error) {
      if (isConnectionLost(error)) this.#shares.refuseWaiting(tenant, new DatabaseStoppedAnswering(error));
      throw error;
    } finally {
      releaseShare();
    }
  }
}

/** Runs `work` on a connection of `pool`, then gives it back. */
async function onConnectionOf<Result>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<Result>): Promise<Result> {
  const client = await pool.connect();
  try {
    const result = await work(client);
    client.release();
    return result;
  } catch (error) {
    // A connection left mid-statement or inside a transaction is closed, never reused.
    client.release(isReusable(client as pg.PoolClient & { readyForQuery?: boolean }) ? undefined : (error as Error));
    throw error;
  }
}

function newPool(url: string, max: number, connectTimeoutMs: number, onIdleError: (error: Error) => void): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    connectionTimeoutMillis: connectTimeoutMs,
    keepAlive: true,
    max,
    // A connection that fails while in use fails its statement too, which is answered (503);
    // the event itself must not go unheard, or it would end the process.
    onConnect: (client) => void client.on('error', () => {}),
  });
  pool.on('error', onIdleError);
  return pool;
}
