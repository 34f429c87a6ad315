import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { postgresAddress } from '../values/postgres-url.ts';

/** Unless told otherwise (the service: `DATABASE_CONNECT_TIMEOUT_MS`). */
export const CONNECT_TIMEOUT_MS = 1500;

type LogLine = (message: unknown) => void;

export interface KnexOptions {
  log?: LogLine;
  /** A 503, never a hang (SPEC §7); migrations and tools, whose statements may rightly run long, leave it out. */
  queryTimeoutMs?: number;
  connectTimeoutMs?: number;
}

export function createKnex(url: string, { log = () => {}, queryTimeoutMs, connectTimeoutMs = CONNECT_TIMEOUT_MS }: KnexOptions = {}): Knex {
  return knexFactory({
    client: 'pg',
    connection: { connectionString: url, connectionTimeoutMillis: connectTimeoutMs, query_timeout: queryTimeoutMs, keepAlive: true },
    pool: { min: 0, max: 10, validate: isReusable },
    log: { warn: log, error: log, deprecate: log, debug: log },
    acquireConnectionTimeout: connectTimeoutMs + 200,
  });
}

/**
 * One statement on a connection of its own, limited only in connecting: start-up's reads, which a busy database may
 * answer slower than a request's time limit, and a failed start-up would cost more than the wait.
 */
export async function queryOnce<Row>(url: string, connectTimeoutMs: number, text: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs });
  // A connection lost before `end`: the statement fails with it; the event itself must not end the process.
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.query(text, values)).rows as Row[];
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** After a time limit a `BEGIN` may still complete and leave the connection in a transaction nobody commits: it is closed, never reused. */
export function isReusable(connection: pg.Client & { readyForQuery?: boolean }): boolean {
  return connection.readyForQuery === true && connection.getTransactionStatus() === 'I';
}

/**
 * 57014: a statement cancelled, here by its time limit (statement_timeout); 57P01-57P03: the server
 * shutting down, crashed or starting; 3D000: the database itself gone (dropped); 53300: no
 * connection slot left on the server. And class 08 below.
 */
const UNREACHABLE_CODES = new Set(['57014', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', '57P01', '57P02', '57P03', '3D000', '53300', '08006', '08001']);

/**
 * A connection ended by an error of SQLSTATE class 08 (connection exception): a pooler's own refusals. PgBouncer ends
 * its clients' connections with FATAL 08P01 while it cannot reach the server (`server login has been failing, try again
 * later (server_login_retry)`, `pgbouncer cannot connect to server`, `query_wait_timeout`): each request was a 500
 * 'unhandled error' until the server was back. Not an ERROR of that class: PostgreSQL's 08P01 for a Bind that does not
 * fit its statement is a fault of the statement, and the connection goes on.
 */
function isConnectionException(error: Error): boolean {
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  return severity === 'FATAL' && typeof code === 'string' && code.startsWith('08');
}

/**
 * pg's own words for a server that went away or stopped answering: a dropped connection, the
 * pool's and the client's connect time limits, and the query time limit above. Knex puts the
 * SQL text in front of a failed query's message, so these are not anchored at the start.
 */
const UNREACHABLE_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable/i;

/** pg's words for a server that did not answer a new connection within `connectionTimeoutMillis`. */
const CONNECT_TIMEOUT_MESSAGE = /(?:^|- )timeout expired$/i;

export function isConnectTimeout(error: unknown): boolean {
  return error instanceof Error && CONNECT_TIMEOUT_MESSAGE.test(error.message);
}

/** `host:port` of a database URL (`host:port/name` with `withName`), for a message: never its user or password. */
export function databaseAddress(url: string, { withName = false } = {}): string {
  const { host, port, database } = postgresAddress(url) ?? { host: '', port: '', database: '' };
  return `${host || 'localhost'}:${port || '5432'}${withName ? `/${database}` : ''}`;
}

/** PostgreSQL cancelled the statement at its `statement_timeout` (SQLSTATE 57014). */
export function isStatementTimeout(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === '57014';
}

/** A statement cancelled at its time limit (57014), or its backend ended by the service's watchdog (57P01). */
const ENDED_STATEMENT_CODES = new Set(['57014', '57P01']);

/** The database did not answer at all, as opposed to one statement cancelled or ended, which says nothing of the others. */
export function isConnectionLost(error: unknown): boolean {
  return isDatabaseUnreachable(error) && !ENDED_STATEMENT_CODES.has((error as { code?: unknown }).code as string);
}

/** True for errors that mean "the database is not there", as opposed to a bad query. */
export function isDatabaseUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'KnexTimeoutError') return true;
  if (UNREACHABLE_MESSAGES.test(error.message) || isConnectTimeout(error)) return true;
  const code = (error as { code?: unknown }).code;
  return (typeof code === 'string' && UNREACHABLE_CODES.has(code)) || isConnectionException(error);
}
