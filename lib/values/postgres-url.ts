/** Where a postgres:// URL points, as pg reads it: `host` and `port` query parameters win over the URL's own. */
export interface PostgresAddress {
  readonly host: string;
  /** Empty when the URL names none (pg's 5432). */
  readonly port: string;
  /** The database's name, decoded; empty when the URL names none. */
  readonly database: string;
}

/** Undefined when pg could not read `value` (it would fail with only "Invalid URL"). */
export function postgresAddress(value: string): PostgresAddress | undefined {
  if (!/^postgres(ql)?:\/\//.test(value)) return undefined;
  // pg reads `user@/db?host=/run/postgresql` with a stand-in host, the socket's folder coming in `host`.
  const url = URL.parse(value) ?? URL.parse(value.replace('@/', '@stand-in/'));
  if (url === null) return undefined;
  return { host: url.searchParams.get('host') ?? url.hostname, port: url.searchParams.get('port') ?? url.port, database: decodedName(url.pathname.slice(1)) };
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}
