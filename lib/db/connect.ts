import knexFactory, { type Knex } from 'knex';

/** How long a caller waits for a connection before the database counts as unreachable. */
const CONNECT_TIMEOUT_MS = 1500;

type LogLine = (message: unknown) => void;

/** A knex over pg whose own warnings go to `log` (the service logger at debug) instead of the console. */
export function createKnex(url: string, log: LogLine = () => {}): Knex {
  return knexFactory({
    client: 'pg',
    connection: { connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS },
    pool: { min: 0, max: 10 },
    log: { warn: log, error: log, deprecate: log, debug: log },
    acquireConnectionTimeout: CONNECT_TIMEOUT_MS + 200,
  });
}

const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', '57P01', '57P03', '08006', '08001']);

/** True for errors that mean "the database is not there", as opposed to a bad query. */
export function isDatabaseUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'KnexTimeoutError') return true;
  if (/Connection terminated|timeout exceeded when trying to connect/i.test(error.message)) return true;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && UNREACHABLE_CODES.has(code);
}
