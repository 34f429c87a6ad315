import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, lstatSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { ExecutionContext } from 'ava';
import { postgresBinaries } from '../../lib/dev/embedded-postgres/places.ts';
import { serverAccount } from '../../lib/dev/embedded-postgres/server-account.ts';
import { TEST_JWT_SECRET } from './service.ts';
import { scratchFolder } from './scratch.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** A `node lib/main.ts` running on the embedded PostgreSQL of `dataDir`. */
export interface EmbeddedService {
  readonly child: ChildProcess;
  readonly url: string;
  /** Every line the process wrote to stdout and stderr so far. */
  readonly lines: string[];
  readonly exited: Promise<[number | null, NodeJS.Signals | null]>;
}

/** The environment of a child that must use the embedded database: no DATABASE_URL, no make flags. */
export function embeddedEnvironment(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { DATABASE_URL: _url, MAKEFLAGS: _flags, MAKELEVEL: _level, MFLAGS: _mflags, ...outer } = process.env;
  return { ...outer, PORT: '0', HOST: '127.0.0.1', JWT_SECRET: TEST_JWT_SECRET, DATA_DIR: dataDir, LOG_LEVEL: 'info', ...extra };
}

/** Starts the service with no DATABASE_URL and resolves once it listens; killed after the test if still running. */
export async function startEmbeddedService(t: ExecutionContext, dataDir: string): Promise<EmbeddedService> {
  const child = spawn(path.join(ROOT, 'node_modules/.bin/node'), ['lib/main.ts'], { cwd: ROOT, env: embeddedEnvironment(dataDir), stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const lines: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    for (const stream of [child.stdout, child.stderr]) {
      if (stream === null) continue;
      createInterface({ input: stream }).on('line', (line) => {
        lines.push(line);
        const url = listeningUrl(line);
        if (url) resolve(url);
      });
    }
    exited.then(([code]) => reject(new Error(`the service exited with ${code} before listening:\n${lines.join('\n')}`)));
  });
  return { child, url, lines, exited };
}

/** The URL of a `spaceport listening` log line, if `line` is one. */
export function listeningUrl(line: string): string | undefined {
  if (!line.startsWith('{')) return undefined;
  const entry = JSON.parse(line) as { msg?: string; url?: string };
  return entry.msg === 'spaceport listening' ? entry.url : undefined;
}

/** A throwaway DATA_DIR; mode 0755 unless told, so that the `postgres` user can reach it when we are root. */
export function temporaryDataDir(mode = 0o755): string {
  const dataDir = scratchFolder('embedded');
  chmodSync(dataDir, mode);
  return dataDir;
}

/** Removes a DATA_DIR and, when its `postgres` folder is a link to data kept elsewhere, that data too. */
export function removeDataDir(dataDir: string): void {
  const link = path.join(dataDir, 'postgres');
  if (existsSync(link) && lstatSync(link).isSymbolicLink()) rmSync(path.dirname(realpathSync(link)), { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
}

/** The postmaster's pid from PostgreSQL's own lock file, when there is one. */
export function postmasterPid(dataDir: string): number | undefined {
  const file = path.join(dataDir, 'postgres', 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  return Number(readFileSync(file, 'utf8').split('\n')[0]);
}

/** True once `pid` is no process, or only a zombie waiting to be reaped. */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  const stat = path.join('/proc', String(pid), 'stat');
  return existsSync(stat) && /^\d+ \(.*\) Z/.test(readFileSync(stat, 'utf8'));
}

/** Polls `condition` every 20 ms; true if it held within `limitMs`. */
export async function until(condition: () => boolean | Promise<boolean>, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return condition();
}

/**
 * Starts PostgreSQL on the (initialised) data folder of `dataDir` the way a crashed service
 * leaves it: daemonised by `pg_ctl`, its parent gone. Returns the postmaster's pid. `pg_ctl` runs
 * as the service runs the server, from the binaries the service uses: as root, the `postgres`
 * user may not reach them in a private clone, and uses their copy in the shared folder.
 */
export async function startOrphanServer(dataDir: string, port: number): Promise<number> {
  const account = serverAccount();
  const pgCtl = path.join(await postgresBinaries(account), 'bin', 'pg_ctl');
  const databaseDir = realpathSync(path.join(dataDir, 'postgres'));
  const flags = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=`;
  const ids = account.switched ? { uid: account.uid, gid: account.gid } : {};
  const starter = spawn(pgCtl, ['start', '-w', '-D', databaseDir, '-o', flags], { ...ids, cwd: '/', stdio: 'ignore' });
  const [code] = await once(starter, 'exit');
  if (code !== 0) throw new Error(`pg_ctl start exited with ${code}`);
  const pid = postmasterPid(dataDir);
  if (pid === undefined) throw new Error('pg_ctl started no server');
  return pid;
}

/** Pids of the processes whose command line names `dataDir` (a server on it, its keeper): none once all stopped. */
export function processesMentioning(dataDir: string): number[] {
  const targets = [dataDir, ...(existsSync(path.join(dataDir, 'postgres')) ? [realpathSync(path.join(dataDir, 'postgres'))] : [])];
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || processGone(Number(entry))) continue;
    const commandLine = readCommandLine(entry);
    if (targets.some((target) => commandLine.includes(target))) pids.push(Number(entry));
  }
  return pids;
}

/** The pid of the keeper process of `dataDir`'s embedded server, if one runs. */
export function keeperPid(dataDir: string): number | undefined {
  return processesMentioning(dataDir).find((pid) => readCommandLine(String(pid)).includes('embedded-postgres/keeper.ts'));
}

function readCommandLine(pid: string): string {
  try {
    return readFileSync(path.join('/proc', pid, 'cmdline'), 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** Sends SIGTERM and waits for the exit. */
export async function stopService(service: EmbeddedService): Promise<[number | null, NodeJS.Signals | null]> {
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGTERM');
  return service.exited;
}

/** After a failed test: kills what is left on `dataDir` (our own processes only: the folder is ours). */
export function killLeftovers(dataDir: string): void {
  for (const pid of processesMentioning(dataDir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
