import pg from 'pg';
import { isStalePlan, type PreparedStatements, type StatementMessages, UNNAMED } from './prepared-statements.ts';

export interface StatementScope {
  readonly role: string;
  readonly tenantSetting: string;
  readonly tenant: string;
  readonly statementTimeout: string;
  /** For the transaction alone: a transaction-mode pooler hands the connection to another client afterwards. */
  readonly idleInTransactionTimeout: string;
  /** As `application_name`: how `BackendWatchdog` finds its backend. */
  readonly tag: string;
}

/** `set_config(…, true)` is `SET LOCAL`, with every value bound. */
const SCOPE_SQL =
  "select where (set_config('role', $1, true) || set_config($2, $3, true) || set_config('statement_timeout', $4, true) || set_config('application_name', $5, true) || set_config('idle_in_transaction_session_timeout', $6, true)) is null";

const withPlanCacheMode = (mode: string) => SCOPE_SQL.replace(') is null', ` || set_config('plan_cache_mode', '${mode}', true)) is null`);

/**
 * The scope of a prepared read: planned for its values each time, as an unnamed statement is,
 * never a generic plan, which after five runs PostgreSQL might keep for values it suits less.
 * Not for writes: a trigger's PL/pgSQL statements would be planned again on every row (an insert
 * of a document holding arrays cost 43 µs more of the database's CPU).
 */
const READ_SCOPE_SQL = withPlanCacheMode('force_custom_plan');

/**
 * The scope of a prepared read by a unique key (`Statement.planOnce`): planned once, before any
 * value is known, and that plan kept on the connection. Planning was a third of PostgreSQL's CPU
 * for a lookup by username (53 µs of 143).
 */
const PLAN_ONCE_SCOPE_SQL = withPlanCacheMode('force_generic_plan');

/** Reads are prepared; writes, `begin` and anything else go unnamed after a prepared scope. */
const READ = /^select\s/i;

/** pg's Query writes its statement's messages in `prepare`, which its types do not declare. */
interface QueryMessages {
  prepare(connection: pg.Connection): void;
}

/** What pg's Connection believes it has parsed, by name, which its types do not declare either. */
interface ParsedStatements {
  parsedStatements: Record<string, string>;
}

/**
 * The scope's Parse, Bind and Execute, then the statement's, then one Sync: one implicit transaction, so the settings
 * hold for this statement alone on whatever server connection a pooler gives it, at no round trip.
 * pg has no public way to send two statements before one Sync: `prepare` is undocumented, test/db/scoped-query.test.ts pins it.
 */
class ScopedQuery extends pg.Query {
  /** pg's, undeclared in its types. */
  declare queryMode: string;
  declare name: string | undefined;
  declare text: string;
  readonly #scope: string[];
  readonly #prepared: PreparedStatements | undefined;
  readonly #planOnce: boolean;
  #sentOn: pg.Connection | undefined;

  constructor(scope: StatementScope, text: string, values: unknown[], prepared: PreparedStatements | undefined, planOnce: boolean, callback: (error: Error | undefined, result: unknown) => void) {
    // The text, not a config object: pg copies an object's every property descriptor (2 % of a request's CPU).
    super(text, values, callback);
    // Else a statement without values would go as a simple query.
    this.queryMode = 'extended';
    this.#scope = [scope.role, scope.tenantSetting, scope.tenant, scope.statementTimeout, scope.tag, scope.idleInTransactionTimeout];
    this.#prepared = prepared;
    this.#planOnce = planOnce;
  }

  prepare(connection: pg.Connection): void {
    this.#sentOn = connection;
    const read = this.#prepared !== undefined && READ.test(this.text);
    const scopeText = !read ? SCOPE_SQL : this.#planOnce ? PLAN_ONCE_SCOPE_SQL : READ_SCOPE_SQL;
    const scope = this.#messages(connection, scopeText);
    const own = read ? this.#messages(connection, this.text) : UNNAMED;
    // The Closes first: a failing scope skips what follows it, and room must be made all the same.
    for (const closed of [...scope.close, ...own.close]) connection.close({ type: 'S', name: closed }, false);
    if (scope.parse) connection.parse({ name: scope.name, text: scopeText, types: [] }, false);
    connection.bind({ statement: scope.name, values: this.#scope }, false);
    connection.execute({ portal: '' }, false);
    if (own.name !== '') {
      if (own.parse) connection.parse({ name: own.name, text: this.text, types: [] }, false);
      // pg parses unless it believes the connection holds the name: it does now.
      const { parsedStatements } = connection as unknown as ParsedStatements;
      for (const closed of own.close) delete parsedStatements[closed];
      parsedStatements[own.name] = this.text;
      this.name = own.name;
    }
    (pg.Query.prototype as unknown as QueryMessages).prepare.call(this, connection);
  }

  /** After a failure, the statement's own name may not be held: its next use parses it again. */
  forgetOwnName(): void {
    if (this.#sentOn !== undefined && this.name !== undefined) this.#prepared?.forget(this.#sentOn, this.name);
  }

  #messages(connection: pg.Connection, text: string): StatementMessages {
    return this.#prepared?.messages(connection, text) ?? UNNAMED;
  }
}

/**
 * Citus (SPEC §15.4) propagates only `SET LOCAL`, inside a block: `begin`, the settings (SET takes no bound value), the
 * statement, `commit`, then one Sync. A `begin` statement leaves its block open for `db.transaction`.
 */
class CitusScopedQuery extends pg.Query {
  declare queryMode: string;
  readonly #before: string[];
  readonly #after: string[];

  constructor(scope: StatementScope, text: string, values: unknown[], callback: (error: Error | undefined, result: unknown) => void) {
    super(text, values, callback);
    this.queryMode = 'extended';
    const opens = /^\s*begin\s*$/i.test(text);
    this.#before = [
      ...(opens ? [] : ['begin']),
      `set local role ${pg.escapeIdentifier(scope.role)}`,
      `set local ${scope.tenantSetting} = ${pg.escapeLiteral(scope.tenant)}`,
      `set local statement_timeout = ${Number(scope.statementTimeout)}`,
      // A lock wait ends (55P03) before the statement's limit would (57014): a write held by a
      // shard split or move is then told apart from a slow statement, and tried again.
      `set local lock_timeout = ${Math.floor(Number(scope.statementTimeout) / 2)}`,
      `set local application_name = ${pg.escapeLiteral(scope.tag)}`,
    ];
    this.#after = opens ? [] : ['commit'];
  }

  /** Where the statement's own result is among those pg answers (one per statement sent). */
  get resultIndex(): number {
    return this.#before.length;
  }

  prepare(connection: pg.Connection): void {
    const send = (text: string) => {
      connection.parse({ name: '', text, types: [] }, false);
      connection.bind({ values: [] }, false);
      connection.execute({ portal: '' }, false);
    };
    // The `begin` itself, when the statement is one, goes in order: first, then the settings.
    const opens = this.#after.length === 0;
    if (opens) send('begin');
    else for (const text of this.#before) send(text);
    if (opens) for (const text of this.#before) send(text);
    else (pg.Query.prototype as unknown as QueryMessages).prepare.call(this, withoutSync(connection, () => this.#after.forEach(send)));
    if (opens) connection.sync();
  }
}

/** `connection` whose Sync first sends what `beforeSync` sends: the `commit` after the statement. */
function withoutSync(connection: pg.Connection, beforeSync: () => void): pg.Connection {
  return new Proxy(connection, {
    get(target, name, receiver) {
      if (name !== 'sync') return Reflect.get(target, name, receiver);
      return () => {
        beforeSync();
        target.sync();
      };
    },
  });
}

export type ScopeForm = 'statement' | 'citus';

/** How a statement goes with its scope (by default: in the `statement` form, unnamed, planned for its values). */
export interface ScopeOptions {
  readonly form?: ScopeForm;
  /** The statements go prepared while the connections keep them (in the `statement` form). */
  readonly prepared?: PreparedStatements | undefined;
  /** A read by a unique key, prepared: it keeps its first plan. */
  readonly planOnce?: boolean | undefined;
}

export function queryInScope<Row extends pg.QueryResultRow>(
  client: pg.ClientBase,
  scope: StatementScope,
  text: string,
  values: unknown[],
  { form = 'statement', prepared, planOnce = false }: ScopeOptions = {},
): Promise<pg.QueryResult<Row>> {
  if (form === 'citus') return citusQueryInScope(client, scope, text, values);
  if (prepared?.kept !== true) return sendInScope(client, scope, text, values, undefined, false);
  return sendPrepared(client, scope, text, values, prepared, planOnce);
}

/** Sent again, unnamed, when it failed before anything ran because of its preparation. */
async function sendPrepared<Row extends pg.QueryResultRow>(client: pg.ClientBase, scope: StatementScope, text: string, values: unknown[], prepared: PreparedStatements, planOnce: boolean): Promise<pg.QueryResult<Row>> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      // Once given up, exactly as without preparing: the plain scope, nothing named.
      return await sendInScope<Row>(client, scope, text, values, prepared.kept ? prepared : undefined, planOnce);
    } catch (error) {
      prepared.failed(text, error);
      // A stale plan is raised before anything runs: sent again, unnamed. Another error of analysis is the caller's.
      const again = prepared.givenUpOver(error) || isStalePlan(error);
      if (!again || attempt === 3) throw error;
    }
  }
}

function sendInScope<Row extends pg.QueryResultRow>(
  client: pg.ClientBase,
  scope: StatementScope,
  text: string,
  values: unknown[],
  prepared: PreparedStatements | undefined,
  planOnce: boolean,
): Promise<pg.QueryResult<Row>> {
  return new Promise((resolve, reject) => {
    const query: ScopedQuery = new ScopedQuery(scope, text, values, prepared, planOnce, (error, results) => {
      if (error !== undefined && error !== null) {
        query.forgetOwnName();
        reject(error);
      }
      // pg answers one result per statement sent: the scope's, then this statement's.
      else resolve((Array.isArray(results) ? results[results.length - 1] : results) as pg.QueryResult<Row>);
    });
    client.query(query);
  });
}

function citusQueryInScope<Row extends pg.QueryResultRow>(client: pg.ClientBase, scope: StatementScope, text: string, values: unknown[]): Promise<pg.QueryResult<Row>> {
  return new Promise((resolve, reject) => {
    const query: CitusScopedQuery = new CitusScopedQuery(scope, text, values, (error, results) => {
      if (error === undefined || error === null) {
        resolve((Array.isArray(results) ? results[query.resultIndex] : results) as pg.QueryResult<Row>);
        return;
      }
      // A failed statement leaves the explicit block aborted at the Sync: end it before the
      // connection goes back to the pool.
      client.query('rollback').then(() => reject(error), () => reject(error));
    });
    client.query(query);
  });
}
