import pg from 'pg';
import { CONNECT_TIMEOUT_MS, isReusable } from './connect.ts';
import { StatementLimit } from './statement-limit.ts';
import type { Statement } from './statement.ts';

/**
 * The role every statement on tenant data runs as (SPEC §4.2): it has no BYPASSRLS and owns no
 * table, so the row-level security policies of the tenant tables always apply to it, even when
 * DATABASE_URL names a superuser. The migration `..._row_level_security` creates and grants it.
 */
export const TENANT_ROLE = 'spaceport_tenant';

/** The session setting the policies compare each row's `tenant` with. */
export const TENANT_SETTING = 'spaceport.tenant';

/**
 * How long after its time limit a statement may still be answered before its connection is cut:
 * PostgreSQL's own cancellation normally answers first (so the statement's work ends there, and
 * a write is rolled back); the cut is for a database that does not answer at all.
 */
const UNANSWERED_GRACE_MS = 300;

/** What a statement is run for: a tenant's rows, or `NO_TENANT` (the tenants table, health). */
export type SessionTenant = string | typeof NO_TENANT;
export const NO_TENANT = '';

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
  /** Where a connection that fails while idle in the pool is reported. */
  onIdleError?: (error: Error) => void;
}

/**
 * The pool that runs every statement on tenant data, each on a connection whose session is set
 * to the statement's own tenant. A connection takes the restricted role once, when it opens;
 * its tenant setting is written before a statement whenever it differs from the tenant the
 * connection last ran for, outside any transaction (a rollback cannot undo it), and forgotten
 * after any failure, so that the next use writes it again. A connection therefore never runs a
 * statement under another statement's tenant, and the common case (the same tenant again)
 * costs no extra round trip.
 */
export class TenantDatabase {
  readonly #pool: pg.Pool;
  readonly #sessionTenants = new WeakMap<pg.ClientBase, SessionTenant>();
  readonly #limit: StatementLimit | undefined;

  constructor(url: string, { queryTimeoutMs, onIdleError = () => {} }: TenantDatabaseOptions = {}) {
    this.#limit = queryTimeoutMs === undefined ? undefined : new StatementLimit(queryTimeoutMs + UNANSWERED_GRACE_MS);
    const statementTimeout = String(queryTimeoutMs ?? 0);
    this.#pool = new pg.Pool({
      connectionString: url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      max: 10,
      onConnect: async (client) => {
        // A connection that fails while in use fails its statement too, which is answered (503);
        // the event itself must not go unheard, or it would end the process.
        client.on('error', () => {});
        await client.query('select set_config($1, $2, false), set_config($3, $4, false)', ['role', TENANT_ROLE, 'statement_timeout', statementTimeout]);
      },
    });
    this.#pool.on('error', onIdleError);
  }

  /** Runs `statement` for `tenant`: PostgreSQL shows it that tenant's rows and no other. */
  query<Row extends pg.QueryResultRow = pg.QueryResultRow>(tenant: SessionTenant, statement: Statement): Promise<pg.QueryResult<Row>> {
    return this.#inSession(tenant, (client) => this.#run<Row>(client, statement.sql, [...statement.bindings]));
  }

  /** Runs `work` in one transaction for `tenant`; it commits when `work` resolves, else rolls back. */
  transaction<Result>(tenant: string, work: (run: TransactionStatement) => Promise<Result>): Promise<Result> {
    return this.#inSession(tenant, async (client) => {
      await this.#run(client, 'begin', []);
      try {
        const result = await work((statement) => this.#run(client, statement.sql, [...statement.bindings]));
        await this.#run(client, 'commit', []);
        return result;
      } catch (error) {
        await this.#run(client, 'rollback', []).catch(() => undefined);
        throw error;
      }
    });
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

  close(): Promise<void> {
    this.#limit?.stop();
    return this.#pool.end();
  }

  #run<Row extends pg.QueryResultRow = pg.QueryResultRow>(client: pg.PoolClient, text: string, values: unknown[]): Promise<pg.QueryResult<Row>> {
    return this.#limit === undefined ? client.query<Row>(text, values) : this.#limit.run<Row>(client, text, values);
  }

  async #inSession<Result>(tenant: SessionTenant, work: (client: pg.PoolClient) => Promise<Result>): Promise<Result> {
    const client = await this.#pool.connect();
    try {
      if (this.#sessionTenants.get(client) !== tenant) {
        this.#sessionTenants.delete(client);
        await this.#run(client, 'select set_config($1, $2, false)', [TENANT_SETTING, tenant]);
        this.#sessionTenants.set(client, tenant);
      }
      const result = await work(client);
      client.release();
      return result;
    } catch (error) {
      this.#sessionTenants.delete(client);
      // A connection left mid-statement or inside a transaction is closed, never reused.
      client.release(isReusable(client as pg.PoolClient & { readyForQuery?: boolean }) ? undefined : (error as Error));
      throw error;
    }
  }
}
