import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { BackendWatchdog } from './backend-watchdog.ts';
import { CONNECT_TIMEOUT_MS, isConnectionLost } from './connect.ts';
import { HealthCheck } from './health-check.ts';
import { newPool, onConnectionOf } from './pool.ts';
import { PreparedStatements } from './prepared-statements.ts';
import { queryInScope, type ScopeForm, type StatementScope } from './scoped-query.ts';
import { StatementCutAtLimit, StatementLimit, StatementUnanswered } from './statement-limit.ts';
import type { Statement } from './statement.ts';
import { DatabaseBusy, type ShareClass, type ShareCounts, type ShareWaitOutcome, TenantShares } from './tenant-shares.ts';

/** No BYPASSRLS and owns no table, so the policies apply even when DATABASE_URL names a superuser (SPEC §4.2; migration `..._row_level_security`). */
export const TENANT_ROLE = 'spaceport_tenant';

/** The setting the policies compare each row's `tenant` with, set for each statement's transaction. */
export const TENANT_SETTING = 'spaceport.tenant';

/** PostgreSQL's own cancellation normally answers first (the work ends, a write rolls back); the cut is for a database that does not answer at all. */
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

/** Refuses at once (SPEC §7) a statement waiting for its share while the database stopped answering its tenant's; 08006: a 503 like that one. */
export class DatabaseStoppedAnswering extends Error {
  override name = 'DatabaseStoppedAnswering';
  readonly code = '08006';
  constructor(cause: unknown) {
    super('the database stopped answering: a statement waiting for a connection was refused', { cause });
  }
}

/**
 * Every connection of the pool stayed in use while a statement waited for one: tenants' shares may add up to more than
 * the pool (two tenants at half each fill it). When the health check shows the database answering: a 503 of its own,
 * not 'database unavailable', and the tenant's other statements wait on.
 */
export class PoolBusy extends DatabaseBusy {
  override name = 'PoolBusy';
  constructor(poolMax: number, waitedMs: number) {
    super(`all ${poolMax} database connections of this instance stayed busy for ${waitedMs} ms (DATABASE_POOL_MAX, DATABASE_CONNECT_TIMEOUT_MS)`);
  }
}

/** pg-pool's words when a statement waited `connectionTimeoutMillis` for a connection of a full pool. */
const POOL_WAIT_TIMEOUT = 'timeout exceeded when trying to connect';

/** How long a statement that meets a shard move is tried again unless configured: `limits.handlerMs`' default. */
const DEFAULT_SHARD_MOVE_WAIT_MS = 30_000;

const DEFAULT_QUEUE_MS = 2000;

/** `idle_in_transaction_session_timeout`: the backstop for a process frozen mid-transaction, whose own rollback cannot run. */
const DEFAULT_IDLE_IN_TRANSACTION_MS = 60_000;

export function defaultTenantConnections(poolMax: number): number {
  return Math.max(1, Math.floor(poolMax / 2));
}

/** How traces follow statements (`lib/tracing`); `sql` holds no values: every value is bound. */
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

export type TransactionStatement = (statement: Statement) => Promise<pg.QueryResult>;

export interface TenantDatabaseOptions {
  /**
   * Where session work goes (`DATABASE_DIRECT_URL`, else the database's own URL). When it is not
   * `url`, `url` names a pooler: the health checks ask the database on this one, and see that the
   * pooler logs a client in and does not refuse its statement (`HealthCheck`).
   */
  sessionUrl?: string;
  /** `statement_timeout`; a statement unanswered shortly after has its connection cut. Either fails as "database unreachable". */
  queryTimeoutMs?: number;
  /** `limits.resultBytes`, with `queryTimeoutMs`: a statement whose rows come to more has its connection cut (`ResultTooLarge`). */
  maxResultBytes?: number;
  /** `DATABASE_POOL_MAX`. */
  poolMax?: number;
  tenantConnections?: number;
  queueMs?: number;
  onShareWait?: (shareClass: ShareClass, outcome: ShareWaitOutcome, seconds: number) => void;
  idleInTransactionMs?: number;
  connectTimeoutMs?: number;
  onIdleError?: (error: Error) => void;
  onStatement?: (seconds: number) => void;
  traceStatement?: StatementTracer;
  /** `citus` on a Citus coordinator (SPEC §15.4). */
  scopeForm?: ScopeForm;
  /** `DATABASE_PREPARED_STATEMENTS`: false sends every statement unnamed. */
  preparedStatements?: boolean;
  /** Told once if the connections turn out not to keep prepared statements (a transaction-mode pooler without them). */
  onUnprepared?: () => void;
  /**
   * How long a statement or transaction that meets a Citus shard split or move keeps being tried
   * again: the request's own limit (`limits.handlerMs`), so a write held by a move waits for it
   * instead of failing; 30 s unless given.
   */
  shardMoveWaitMs?: number;
}

export interface PoolCounts {
  readonly total: number;
  readonly idle: number;
  readonly waiting: number;
}

/**
 * Each statement carries its own scope (role, tenant, time limit) for its transaction alone, sent with it in one
 * exchange (`queryInScope`): the answers are the same through a transaction-mode pooler (SPEC §15.2).
 */
export class TenantDatabase {
  readonly #pool: pg.Pool;
  readonly #poolMax: number;
  readonly #connectTimeoutMs: number;
  /** On a connection of its own, which no tenant's statement can take (SPEC §17.2). */
  readonly #health: HealthCheck;
  readonly #shares: TenantShares;
  readonly #limit: StatementLimit | undefined;
  readonly #statementTimeout: string;
  readonly #idleInTransactionTimeout: string;
  readonly #onStatement: ((seconds: number) => void) | undefined;
  readonly #traceStatement: StatementTracer | undefined;
  readonly #scopeForm: ScopeForm;
  readonly #prepared: PreparedStatements | undefined;
  readonly #shardMoveWaitMs: number;
  readonly #tagPrefix = `spaceport/${randomBytes(4).toString('hex')}/`;
  #tagsGiven = 0;

  constructor(url: string, options: TenantDatabaseOptions = {}) {
    const { queryTimeoutMs, poolMax = 10, connectTimeoutMs = CONNECT_TIMEOUT_MS, onIdleError = () => {}, onStatement, traceStatement, scopeForm = 'statement' } = options;
    this.#scopeForm = scopeForm;
    this.#prepared = scopeForm === 'statement' && options.preparedStatements !== false ? new PreparedStatements(options.onUnprepared) : undefined;
    this.#shardMoveWaitMs = options.shardMoveWaitMs ?? DEFAULT_SHARD_MOVE_WAIT_MS;
    this.#onStatement = onStatement;
    this.#traceStatement = traceStatement;
    this.#limit = queryTimeoutMs === undefined ? undefined : new StatementLimit(queryTimeoutMs + UNANSWERED_GRACE_MS, new BackendWatchdog(url, connectTimeoutMs), options.maxResultBytes);
    this.#statementTimeout = String(queryTimeoutMs ?? 0);
    this.#idleInTransactionTimeout = String(options.idleInTransactionMs ?? DEFAULT_IDLE_IN_TRANSACTION_MS);
    this.#shares = new TenantShares({
      perTenant: options.tenantConnections ?? defaultTenantConnections(poolMax),
      queueMs: options.queueMs ?? DEFAULT_QUEUE_MS,
      onWait: options.onShareWait,
    });
    this.#pool = newPool(url, poolMax, connectTimeoutMs, onIdleError);
    const limit = this.#limit;
    if (limit !== undefined) this.#pool.on('connect', (client) => limit.follow(client));
    this.#poolMax = poolMax;
    this.#connectTimeoutMs = connectTimeoutMs;
    const { sessionUrl = url } = options;
    this.#health = new HealthCheck({ databaseUrl: sessionUrl, poolerUrl: sessionUrl === url ? undefined : url, connectTimeoutMs, onIdleError, limit: this.#limit });
  }

  /** Runs `statement` for `tenant`: PostgreSQL shows it that tenant's rows and no other. */
  query<Row extends pg.QueryResultRow = pg.QueryResultRow>(tenant: SessionTenant, statement: Statement): Promise<pg.QueryResult<Row>> {
    const scope = this.#scope(tenant);
    return retriedOverShardMoves(this.#scopeForm, this.#shardMoveWaitMs, () =>
      this.#withConnection(tenant, (client) => this.#watched(client, statement.sql, scope.tag, () => queryInScope<Row>(client, scope, statement.sql, [...statement.bindings], { form: this.#scopeForm, prepared: this.#prepared, planOnce: statement.planOnce }))),
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
      await this.#watched(client, 'begin', scope.tag, () => queryInScope(client, scope, 'begin', [], { form: this.#scopeForm, prepared: this.#prepared }));
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

  /** The `@?` operator must be leakproof (a superuser's right) for the index to serve under row-level security; also proves the role can be taken. */
  async documentIndexUsable(): Promise<boolean> {
    const { rows } = await this.query<{ usable: boolean }>(NO_TENANT, {
      sql: "select proleakproof as usable from pg_proc where oid = 'pg_catalog.jsonb_path_exists_opr(jsonb, jsonpath)'::regprocedure",
      bindings: [],
    });
    return rows[0]?.usable === true;
  }

  /**
   * Resolves when the database answers, asked on a connection no tenant can take (and, behind a
   * pooler, when the pooler serves a client, if only by queueing its statement): readiness reports
   * the database, not the tenants' load. Checks asked while one is under way share its answer (`HealthCheck`).
   */
  answers(): Promise<void> {
    return this.#health.answers();
  }

  /** The health check's answer (shared with those under way), as a yes or no. */
  #stillAnswers(): Promise<boolean> {
    return this.answers().then(
      () => true,
      () => false,
    );
  }

  poolCounts(): PoolCounts {
    return { total: this.#pool.totalCount, idle: this.#pool.idleCount, waiting: this.#pool.waitingCount };
  }

  shareCounts(): ShareCounts {
    return this.#shares.counts();
  }

  async close(): Promise<void> {
    this.#limit?.stop();
    await Promise.all([this.#pool.end(), this.#health.close()]);
  }

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

  #limited<Result>(client: pg.PoolClient, tag: string, send: () => Promise<Result>): Promise<Result> {
    return this.#limit === undefined ? send() : this.#limit.watch(client, send, tag);
  }

  async #withConnection<Result>(tenant: SessionTenant, work: (client: pg.PoolClient) => Promise<Result>): Promise<Result> {
    const taken = this.#shares.take(tenant);
    const releaseShare = typeof taken === 'function' ? taken : await taken;
    try {
      return await onConnectionOf(this.#pool, work);
    } catch (error) {
      // A full pool is not proof that the database answers: the statements holding it may hang on a database gone.
      if ((error as Error).message === POOL_WAIT_TIMEOUT && (await this.#stillAnswers())) throw new PoolBusy(this.#poolMax, this.#connectTimeoutMs);
      // Nor is a statement unanswered past its limit: behind a pooler it may have waited for a server connection. Asked
      // promptly: with a database gone, the 503 still comes within SPEC §7's 2 s (cut 0.3 s after the 1.5 s limit).
      if (error instanceof StatementUnanswered && (await this.#health.answersPromptly())) throw new StatementCutAtLimit(error);
      if (isConnectionLost(error)) this.#shares.refuseWaiting(tenant, new DatabaseStoppedAnswering(error));
      throw error;
    } finally {
      releaseShare();
    }
  }
}
