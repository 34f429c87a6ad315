import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { freePort } from '../../lib/dev/embedded-postgres/free-port.ts';
import type { OnePerItem } from './load.ts';
import { setTimeout as sleep } from 'node:timers/promises';

/** A server under test, running in its own process so it does not share a core with the load generator. */
export interface ChildServer {
  readonly name: string;
  readonly pid: number;
  readonly origin: string;
  /** Milliseconds from spawn until the readiness probe first answered. */
  readonly startupMs: number;
  /** Resident set size of the server process, in bytes. */
  rssBytes(): number;
  /** CPU time the process has used so far (user + system, all its threads); undefined where /proc is missing. */
  cpuMicroseconds(): number | undefined;
  /** SIGTERM, then SIGKILL if it has not exited within the grace period. */
  stop(): Promise<void>;
}

export interface ChildServerOptions {
  readonly name: string;
  /** A `.ts` or `.js` file run by this Node. */
  readonly script: string;
  readonly env: Readonly<Record<string, string>>;
  /** Polled until it answers below 500. */
  readonly readyPath: string;
  readonly readyTimeoutMs?: number;
}

const STOP_GRACE_MS = 15_000;
const POLL_INTERVAL_MS = 20;
const STDERR_KEPT = 4000;

/** Children still running; killed outright if the bench itself exits without stopping them. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts `script` on a free loopback port (env PORT, HOST) and waits until it answers. */
export async function startChildServer(options: ChildServerOptions): Promise<ChildServer> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const started = performance.now();
  // Request logs go to stdout: discarded, as a log shipper would take them off the process.
  // The bench's own Node arguments (Makefile's SERVE) go to every server alike, as `make run` has them.
  const child = spawn(process.execPath, [...process.execArgv, options.script], {
    env: { ...nodeSettings(), ...options.env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  running.add(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT);
  });
  const forget = () => running.delete(child);
  const exited = once(child, 'exit').then(forget, forget);
  try {
    await waitUntilAnswering(child, origin + options.readyPath, options.readyTimeoutMs ?? 60_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${options.name} did not start: ${(error as Error).message}${stderr ? `\n${stderr.trim()}` : ''}`);
  }
  const startupMs = performance.now() - started;
  return {
    name: options.name,
    pid: child.pid ?? 0,
    origin,
    startupMs,
    rssBytes: () => residentSetBytes(child.pid ?? 0),
    cpuMicroseconds: () => processCpuMicroseconds(child.pid ?? 0),
    stop: () => stopChild(child, exited),
  };
}

/**
 * The Node settings `make bench` runs with (Makefile's SERVE), for every server alike: each is
 * measured as `make run` would run it, the comparison servers on the same terms.
 */
function nodeSettings(): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const name of ['NODE_OPTIONS', 'NODE_COMPILE_CACHE']) {
    const value = process.env[name];
    if (value !== undefined) settings[name] = value;
  }
  return settings;
}

async function waitUntilAnswering(child: ChildProcess, url: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited with ${child.exitCode ?? child.signalCode}`);
    if (await answersBelow500(url)) return;
    await sleep(POLL_INTERVAL_MS);
  }
  throw new Error(`no answer from ${url} within ${timeoutMs} ms`);
}

async function answersBelow500(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return response.status < 500;
  } catch {
    return false;
  }
}

async function stopChild(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

/** Linux reads `/proc`; elsewhere `ps` answers in kilobytes. */
function residentSetBytes(pid: number): number {
  const statusFile = `/proc/${pid}/status`;
  if (existsSync(statusFile)) {
    const line = readFileSync(statusFile, 'utf8').split('\n').find((entry) => entry.startsWith('VmRSS:'));
    if (line) return Number(line.replace(/\D+/g, '')) * 1024;
  }
  return Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim()) * 1024;
}

let clockTicksPerSecond: number | undefined;

/** utime + stime of /proc/<pid>/stat. */
function processCpuMicroseconds(pid: number): number | undefined {
  const statFile = `/proc/${pid}/stat`;
  if (!existsSync(statFile)) return undefined;
  return parseProcessStat(readFileSync(statFile, 'utf8')).cpuMicroseconds;
}

/** What the bench reads of a process's /proc/<pid>/stat. */
export interface ProcessStat {
  /** The command name, as /proc/<pid>/comm holds it. */
  readonly command: string;
  /** When it started, in clock ticks since boot: with the pid, it tells a reused pid apart. */
  readonly startTicks: number;
  /** utime + stime, in microseconds (the kernel counts them in clock ticks, usually 100 a second). */
  readonly cpuMicroseconds: number;
}

/** Reads the text of one /proc/<pid>/stat. */
export function parseProcessStat(stat: string): ProcessStat {
  // The command name in parentheses may hold spaces: the fields are counted after it.
  const commandEnd = stat.lastIndexOf(')');
  const fields = stat.slice(commandEnd + 2).split(' ');
  clockTicksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  const ticks = Number(fields[11]) + Number(fields[12]);
  return {
    command: stat.slice(stat.indexOf('(') + 1, commandEnd),
    startTicks: Number(fields[19]),
    cpuMicroseconds: (ticks * 1_000_000) / clockTicksPerSecond,
  };
}

/** Starts a server, hands it to `work`, and stops it whatever happens. */
export async function withChildServer<Result>(options: ChildServerOptions, work: (server: ChildServer) => Promise<Result>): Promise<Result> {
  return withChildServers([options], ([server]) => work(server));
}

/**
 * Starts the servers one after the other (each start-up timed alone), runs `work` with all of
 * them running, so that they can be measured in turn, then stops them all.
 */
export async function withChildServers<const Options extends readonly ChildServerOptions[], Result>(
  options: Options,
  work: (servers: OnePerItem<Options, ChildServer>) => Promise<Result>,
): Promise<Result> {
  const started: ChildServer[] = [];
  try {
    for (const each of options) started.push(await startChildServer(each));
    return await work(started as OnePerItem<Options, ChildServer>);
  } finally {
    await Promise.all(started.map((server) => server.stop()));
  }
}
