import { createHash } from 'node:crypto';
import pg from 'pg';

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

/**
 * Named by its text's hash: a server connection that holds this name holds this very text, whoever prepared it there
 * (through a pooler, another instance may have, or an instance of another version, whose text has another name).
 */
const SCOPE_NAME = `spaceport_scope_${createHash('sha256').update(SCOPE_SQL).digest('hex').slice(0, 16)}`;

/** SQLSTATEs of a named statement the server connection does not hold, or holds already: a pooler gave another one. */
const PREPARED_ELSEWHERE = new Set(['26000', '42P05']);

/**
 * The scope as a statement prepared once per connection: PostgreSQL then skips parsing and
 * planning it (about half its CPU for a one-row lookup). A transaction-mode pooler without
 * prepared statements (PgBouncer before 1.21, or `max_prepared_statements = 0`) hands each
 * transaction another server connection: the first statement that meets one which lacks the
 * name, or has it already, fails before anything ran and is sent again, and from then on the
 * scope is parsed with every statement.
 */
export class PreparedScope {
  readonly #connections = new WeakSet<pg.Connection>();
  readonly #onGivenUp: () => void;
  #kept = true;

  constructor(onGivenUp: () => void = () => {}) {
    this.#onGivenUp = onGivenUp;
  }

  get kept(): boolean {
    return this.#kept;
  }

  /** Whether `connection` still needs the scope's Parse; it holds the name from then on. */
  needsParse(connection: pg.Connection): boolean {
    if (this.#connections.has(connection)) return false;
    this.#connections.add(connection);
    return true;
  }

  /** Whether `error` says the connection's statements are not its own to keep: if so, never prepared again. */
  givenUpOver(error: unknown): boolean {
    if (!PREPARED_ELSEWHERE.has((error as { code?: string }).code ?? '')) return false;
    if (this.#kept) {
      this.#kept = false;
      this.#onGivenUp();
    }
    return true;
  }
}

/** pg's Query writes its statement's messages in `prepare`, which its types do not declare. */
interface QueryMessages {
  prepare(connection: pg.Connection): void;
}

/**
 * The scope's Parse, Bind and Execute, then the statement's, then one Sync: one implicit transaction, so the settings
 * hold for this statement alone on whatever server connection a pooler gives it, at no round trip.
 * pg has no public way to send two statements before one Sync: `prepare` is undocumented, test/db/scoped-query.test.ts pins it.
 */
class ScopedQuery extends pg.Query {
  /** pg's, undeclared in its types. */
  declare queryMode: string;
  readonly #scope: string[];
  readonly #prepared: PreparedScope | undefined;

  constructor(scope: StatementScope, text: string, values: unknown[], prepared: PreparedScope | undefined, callback: (error: Error | undefined, result: unknown) => void) {
    // The text, not a config object: pg copies an object's every property descriptor (2 % of a request's CPU).
    super(text, values, callback);
    // Else a statement without values would go as a simple query.
    this.queryMode = 'extended';
    this.#scope = [scope.role, scope.tenantSetting, scope.tenant, scope.statementTimeout, scope.tag, scope.idleInTransactionTimeout];
    this.#prepared = prepared;
  }

  prepare(connection: pg.Connection): void {
    const name = this.#prepared === undefined ? '' : SCOPE_NAME;
    if (this.#prepared === undefined || this.#prepared.needsParse(connection)) connection.parse({ name, text: SCOPE_SQL, types: [] }, false);
    connection.bind({ statement: name, values: this.#scope }, false);
    connection.execute({ portal: '' }, false);
    (pg.Query.prototype as unknown as QueryMessages).prepare.call(this, connection);
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

/** `prepared`: the scope goes as a prepared statement while that holds (in the `statement` form). */
export function queryInScope<Row extends pg.QueryResultRow>(
  client: pg.ClientBase,
  scope: StatementScope,
  text: string,
  values: unknown[],
  form: ScopeForm = 'statement',
  prepared?: PreparedScope,
): Promise<pg.QueryResult<Row>> {
  if (form === 'citus') return citusQueryInScope(client, scope, text, values);
  if (prepared?.kept !== true) return sendInScope(client, scope, text, values, undefined);
  return sendInScope<Row>(client, scope, text, values, prepared).catch((error: unknown) => {
    if (!prepared.givenUpOver(error)) throw error;
    return sendInScope<Row>(client, scope, text, values, undefined);
  });
}

function sendInScope<Row extends pg.QueryResultRow>(client: pg.ClientBase, scope: StatementScope, text: string, values: unknown[], prepared: PreparedScope | undefined): Promise<pg.QueryResult<Row>> {
  return new Promise((resolve, reject) => {
    const query = new ScopedQuery(scope, text, values, prepared, (error, results) => {
      if (error !== undefined && error !== null) reject(error);
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
