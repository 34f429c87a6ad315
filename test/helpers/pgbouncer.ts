import { execFile } from 'node:child_process';
import { chownSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ExecutionContext } from 'ava';
import pg from 'pg';
import { freePort } from '../../lib/dev/embedded-postgres/free-port.ts';
import { SHARED_FOLDER } from '../../lib/dev/embedded-postgres/places.ts';
import { closedFolderOnTheWay, systemUser, type ServerAccount } from '../../lib/dev/embedded-postgres/server-account.ts';
import { debianBinary, startDaemon, type Binary } from './daemons.ts';
import { removeScratch, scratchFolder } from './scratch.ts';

const START_LIMIT_MS = 10_000;
/** The system user PgBouncer runs as when we are root: it refuses to run as root. */
const ACCOUNT_NAME = 'pgbouncer';

/** The path of Debian's `pgbouncer`, installed with apt-get first when it is missing; otherwise why it cannot be had. */
export function pgbouncerBinary(): Promise<Binary> {
  return debianBinary('pgbouncer', ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer'], ['--version']);
}

const BUILD = path.resolve(import.meta.dirname, '../pgbouncer/build-pgbouncer.sh');

/**
 * PgBouncer 1.24, which keeps the clients' prepared statements in transaction mode
 * (`preparedStatements`), built once from Debian's source of it (test/pgbouncer/build-pgbouncer.sh);
 * otherwise why it cannot be had.
 */
export async function preparingPgBouncerBinary(): Promise<Binary> {
  try {
    const { stdout } = await promisify(execFile)(BUILD, [], { timeout: 600_000 });
    return { path: stdout.trim() };
  } catch (error) {
    // Whatever failed, a test needing it is skipped outside CI and fails in CI; the rest go on.
    const { code, stderr } = error as { code?: number; stderr?: string };
    return { missing: code === 3 ? String(stderr).trim() : `building pgbouncer 1.24 failed: ${String(stderr).slice(-2000)}` };
  }
}

export interface PgBouncerOptions {
  /** The `pgbouncer` program (`pgbouncerBinary`). */
  binary: string;
  /** A `postgres://` URL of the server to pool; every database of that server is reachable through it. */
  serverUrl: string;
  /** Server connections per database and user (`default_pool_size`), shared by every client. */
  poolSize: number;
  /**
   * `max_prepared_statements` (PgBouncer 1.21 and later): how many of the clients' prepared
   * statements each server connection keeps. Left out, the setting is not written.
   */
  preparedStatements?: number;
  /** `max_client_conn`: how many clients it takes at once (2000 unless set). */
  maxClients?: number;
}

/** A PgBouncer in transaction mode in front of one PostgreSQL server. */
export interface PgBouncer {
  /** `serverUrl` through the pooler: the same user, password and database. */
  readonly url: string;
  /** Any `postgres://` URL of the same server, through the pooler. */
  pooled(databaseUrl: string): string;
  /** Stops it and removes its files. */
  stop(): Promise<void>;
}

/**
 * Starts PgBouncer as a deployment would run it in front of `serverUrl`: `pool_mode =
 * transaction` (a server connection is a client's for one transaction only, then any other
 * client's), `poolSize` server connections per database and user, on a free port of 127.0.0.1,
 * as its own account when we are root. Clients log in without a password (loopback only).
 * Resolves once a statement runs through it. Needs no test context, so `make bench` can use it.
 */
export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const account = pgbouncerAccount();
  const folder = configurationFolder(account);
  const port = await freePort();
  const server = new URL(options.serverUrl);
  const authFile = path.join(folder, 'users.txt');
  const configFile = path.join(folder, 'pgbouncer.ini');
  ownedFile(authFile, `"${decodeURIComponent(server.username)}" "${decodeURIComponent(server.password)}"\n`, account);
  ownedFile(configFile, configuration({ port, server, authFile, poolSize: options.poolSize, preparedStatements: options.preparedStatements, maxClients: options.maxClients ?? 2000 }), account);
  const daemon = startDaemon(options.binary, [configFile], account.switched ? { uid: account.uid, gid: account.gid } : {});
  const stop = async () => {
    await daemon.stop();
    removeScratch(folder);
  };
  const pooled = (databaseUrl: string) => {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    return url.href;
  };
  const url = pooled(options.serverUrl);
  if (!(await answers(url, () => daemon.child.exitCode === null && daemon.child.signalCode === null))) {
    const stderr = daemon.stderr();
    await stop();
    throw new Error(`pgbouncer did not answer within ${START_LIMIT_MS} ms: ${stderr}`);
  }
  return { url, pooled, stop };
}

/** `startPgBouncer`, stopped after the test. */
export async function startPooler(t: ExecutionContext, options: PgBouncerOptions): Promise<PgBouncer> {
  const pooler = await startPgBouncer(options);
  t.teardown(pooler.stop);
  return pooler;
}

interface Settings {
  port: number;
  server: URL;
  authFile: string;
  poolSize: number;
  preparedStatements: number | undefined;
  maxClients: number;
}

function configuration({ port, server, authFile, poolSize, preparedStatements, maxClients }: Settings): string {
  return [
    '[databases]',
    // Every database name a client asks for, on the one server.
    `* = host=${server.hostname} port=${server.port || 5432}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${authFile}`,
    'pool_mode = transaction',
    // SHOW commands on the `pgbouncer` console, for the tests that count what it holds.
    `stats_users = ${decodeURIComponent(server.username)}`,
    `default_pool_size = ${poolSize}`,
    'min_pool_size = 0',
    'reserve_pool_size = 0',
    `max_client_conn = ${maxClients}`,
    'ignore_startup_parameters = extra_float_digits',
    'log_connections = 0',
    'log_disconnections = 0',
    ...(preparedStatements === undefined ? [] : [`max_prepared_statements = ${preparedStatements}`]),
    '',
  ].join('\n');
}

/** Ourselves, or as root the `pgbouncer` system user, created when the machine has none. */
function pgbouncerAccount(): ServerAccount {
  const uid = process.getuid?.() ?? 0;
  if (uid !== 0) return { uid, gid: process.getgid?.() ?? 0, switched: false };
  try {
    return { ...systemUser(ACCOUNT_NAME), switched: true };
  } catch (error) {
    throw new Error(`pgbouncer refuses to run as root, and the "${ACCOUNT_NAME}" system user could not be had: ${(error as Error).message}`);
  }
}

/**
 * A new folder the account owns, mode 0700: under $TMPDIR, or, when the account cannot reach
 * that (root's private folders), under the folder the embedded PostgreSQL shares for the same reason.
 */
function configurationFolder(account: ServerAccount): string {
  let folder = scratchFolder('pgbouncer');
  if (closedFolderOnTheWay(folder, account) !== undefined) {
    removeScratch(folder);
    mkdirSync(SHARED_FOLDER, { recursive: true, mode: 0o755 });
    folder = scratchFolder('pgbouncer', SHARED_FOLDER);
  }
  if (account.switched) chownSync(folder, account.uid, account.gid);
  return folder;
}

function ownedFile(file: string, content: string, account: ServerAccount): void {
  writeFileSync(file, content, { mode: 0o600 });
  if (account.switched) chownSync(file, account.uid, account.gid);
}

/** Polls `url` until a statement runs through it, while the daemon is `running`. */
async function answers(url: string, running: () => boolean): Promise<boolean> {
  const deadline = Date.now() + START_LIMIT_MS;
  while (Date.now() < deadline && running()) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch {
      // not listening yet
    } finally {
      await client.end().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}
