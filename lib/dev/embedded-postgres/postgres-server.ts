import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { chownSync, closeSync, existsSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import type { ServerAccount } from './server-account.ts';

export interface Cluster {
  /** The folder holding `bin/`, `lib/` and `share/`. */
  readonly binaries: string;
  readonly dataFolder: string;
  readonly account: ServerAccount;
  readonly logFile: string;
  readonly logDescriptor: number;
}

export const SUPERUSER = 'postgres';
const START_LIMIT_MS = 60_000;
const STOP_LIMIT_MS = 30_000;

export function initialiseCluster(cluster: Cluster, password: string): void {
  if (existsSync(path.join(cluster.dataFolder, 'PG_VERSION'))) return;
  // Beside the data folder, readable by the server's account alone, and only while initdb runs.
  const passwordFile = path.join(path.dirname(cluster.dataFolder), `.initdb-password-${randomBytes(6).toString('hex')}`);
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  try {
    if (cluster.account.switched) chownSync(passwordFile, cluster.account.uid, cluster.account.gid);
    const flags = [`--pgdata=${cluster.dataFolder}`, `--username=${SUPERUSER}`, `--pwfile=${passwordFile}`, '--auth=scram-sha-256'];
    // UTF-8 with the built-in C.UTF-8 locale: the same on every machine, whatever locales it has.
    const locale = ['--encoding=UTF8', '--locale=C', '--locale-provider=builtin', '--builtin-locale=C.UTF-8'];
    const result = spawnSync(path.join(cluster.binaries, 'bin', 'initdb'), [...flags, ...locale], { ...spawnAccount(cluster), encoding: 'utf8', timeout: START_LIMIT_MS });
    if (result.status !== 0) {
      const reason = result.error?.message ?? lastMeaningfulLine(result.stderr);
      throw new Error(`embedded PostgreSQL: initdb failed on ${cluster.dataFolder}: ${reason}`);
    }
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

/** Where `setpriv` is present, with a parent-death signal: should we die, even by SIGKILL, the kernel sends the server SIGINT (fast shutdown). */
export async function startServer(cluster: Cluster, port: number): Promise<ChildProcess> {
  const postgres = path.join(cluster.binaries, 'bin', 'postgres');
  // Every make target of the checkout shares this server: a full make test alone holds up to ~60
  // connections, and 100 (PostgreSQL's default) ran out with eight `make test PROJECT=…` beside it.
  const flags = ['-D', cluster.dataFolder, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=400'];
  const [command = postgres, ...args] = [...parentDeathPrefix(), postgres, ...flags];
  const child = spawn(command, args, { ...spawnAccount(cluster), stdio: ['ignore', cluster.logDescriptor, cluster.logDescriptor] });
  await untilReady(child, cluster);
  return child;
}

let parentDeath: string[] | undefined;

function parentDeathPrefix(): string[] {
  parentDeath ??= spawnSync('setpriv', ['--pdeathsig', 'SIGINT', '--', 'true']).status === 0 ? ['setpriv', '--pdeathsig', 'SIGINT', '--'] : [];
  return parentDeath;
}

function spawnAccount(cluster: Cluster): { uid?: number; gid?: number; cwd: string; env: NodeJS.ProcessEnv } {
  const ids = cluster.account.switched ? { uid: cluster.account.uid, gid: cluster.account.gid } : {};
  // A working folder the account may enter, English messages in the log, and none of our
  // environment's secrets, which the server's account could otherwise read.
  const env = { PATH: process.env.PATH, ...(process.env.TZ ? { TZ: process.env.TZ } : {}), LC_MESSAGES: 'C' };
  return { ...ids, cwd: path.dirname(cluster.dataFolder), env };
}

/** PostgreSQL writes `ready` into its lock file once it accepts connections (what `pg_ctl -w` waits for). */
function untilReady(child: ChildProcess, cluster: Cluster): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (reason: string) => {
      clearInterval(poll);
      clearTimeout(limit);
      reject(new Error(`embedded PostgreSQL did not start: ${reason} (its log: ${cluster.logFile})`));
    };
    const onExit = () => fail(lastLogLine(cluster.logFile));
    const onError = (error: Error) => fail(error.message);
    child.once('exit', onExit);
    child.once('error', onError);
    const poll = setInterval(() => {
      const lock = readLockFile(cluster.dataFolder);
      if (lock === undefined || lock.pid !== child.pid || lock.status !== 'ready') return;
      clearInterval(poll);
      clearTimeout(limit);
      child.off('exit', onExit);
      child.off('error', onError);
      resolve();
    }, 50);
    const limit = setTimeout(() => {
      child.kill('SIGQUIT');
      fail(`not ready after ${START_LIMIT_MS / 1000} s`);
    }, START_LIMIT_MS);
  });
}

export async function createDatabaseIfMissing(port: number, password: string, name: string): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: SUPERUSER, password, database: 'postgres' });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`create database ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}

/** Fast shutdown: sessions are ended, a checkpoint is written, the server exits cleanly. */
export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGINT');
  const immediate = setTimeout(() => child.kill('SIGQUIT'), STOP_LIMIT_MS);
  await exited;
  clearTimeout(immediate);
}

export interface LeftOverServer {
  readonly pid: number;
  readonly port: string;
}

/** A server on `dataFolder` that no keeper owns (its owner died). */
export async function stopLeftOverServer(dataFolder: string): Promise<LeftOverServer | undefined> {
  const lock = readLockFile(dataFolder);
  if (lock === undefined || !isServerOf(lock.pid, lock.dataFolder)) return undefined;
  process.kill(lock.pid, 'SIGINT');
  if (!(await untilGone(lock.pid, STOP_LIMIT_MS))) {
    process.kill(lock.pid, 'SIGQUIT');
    await untilGone(lock.pid, 5000);
  }
  return { pid: lock.pid, port: lock.port };
}

interface LockFile {
  readonly pid: number;
  readonly dataFolder: string;
  readonly port: string;
  readonly status: string;
}

/** `postmaster.pid`: pid, data folder, start time, port, socket folder, address, shared memory key, status. */
function readLockFile(dataFolder: string): LockFile | undefined {
  let lines: string[];
  try {
    lines = readFileSync(path.join(dataFolder, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return { pid, dataFolder: lines[1] ?? '', port: lines[3] ?? '', status: (lines[7] ?? '').trim() };
}

/** True when `pid` lives and, where /proc tells, is a server started on that folder (not a reused pid). */
function isServerOf(pid: number, dataFolder: string): boolean {
  if (!isAlive(pid)) return false;
  if (!existsSync('/proc/self')) return true;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(dataFolder);
  } catch {
    return false;
  }
}

/** Alive, and not a zombie waiting for its parent to reap it. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return !existsSync('/proc/self');
  }
}

async function untilGone(pid: number, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await delay(50);
  }
  return true;
}

function lastLogLine(logFile: string): string {
  const size = statSync(logFile).size;
  const length = Math.min(size, 8192);
  const buffer = Buffer.alloc(length);
  const descriptor = openSync(logFile, 'r');
  try {
    readSync(descriptor, buffer, 0, length, size - length);
  } finally {
    closeSync(descriptor);
  }
  return lastMeaningfulLine(buffer.toString('utf8'));
}

function lastMeaningfulLine(text: string): string {
  const lines = text.split('\n').map((line) => line.trim()).filter(Boolean);
  return lines.findLast((line) => /FATAL|PANIC|ERROR|error/.test(line)) ?? lines.at(-1) ?? 'no message';
}
