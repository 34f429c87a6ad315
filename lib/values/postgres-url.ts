import { parse } from 'pg-connection-string';

/** Where a postgres:// URL points, as pg reads it: `host` and `port` query parameters win over the URL's own. */
export interface PostgresAddress {
  readonly host: string;
  /** Empty when the URL names none (pg's 5432). */
  readonly port: string;
  /** The database's name, decoded; empty when the URL names none. */
  readonly database: string;
}

/** Undefined when pg could not read `value` (it would fail with only "Invalid URL" or "URI malformed"). */
export function postgresAddress(value: string): PostgresAddress | undefined {
  if (!/^postgres(ql)?:\/\//.test(value)) return undefined;
  try {
    // pg's own reader of connection strings, so the address named is the one pg connects to.
    const { host, port, database } = parse(value);
    return { host: host ?? '', port: port ?? '', database: database ?? '' };
  } catch {
    return undefined;
  }
}
