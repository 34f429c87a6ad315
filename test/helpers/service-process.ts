import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import type { ExpertInput } from '../../lib/config/index.ts';
import { REPO_PROJECTS_DIR } from './sample.ts';
import { TEST_JWT_SECRET } from './service.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const NODE = path.join(ROOT, 'node_modules/.bin/node');
const START_LIMIT_MS = 60_000;
const STOP_LIMIT_MS = 15_000;

/** How a service process ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** `node lib/main.ts` in a process of its own, as `make run` starts it. */
export interface ServiceProcess {
  /** `http://127.0.0.1:port` it listens on. */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** Resident set size now, in kilobytes (`VmRSS` of /proc/<pid>/status). */
  rssKilobytes(): number;
  /** Every JSON log line written so far. */
  logEntries(): Array<Record<string, unknown>>;
  /** True until the process has exited. */
  running(): boolean;
  /** Resolves once the process has exited. */
  readonly exited: Promise<ProcessExit>;
  /** SIGTERM, SIGKILL if it is still there after 15 s; resolves with how it ended. */
  stop(): Promise<ProcessExit>;
}

export interface ServiceProcessOptions {
  databaseUrl: string;
  /** Written to a file named by EXPERT_CONFIG. */
  expert?: ExpertInput;
  /** Added to (or, when undefined, removed from) the environment. */
  env?: Record<string, string | undefined>;
}

/** Processes still running when the test process ends are killed with it. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts the service over the repository's projects (the sample as default project) on a free
 * port, and resolves once it logs that it listens. Stopped after the test when `t` is given.
 */
export async function startServiceProcess(t: ExecutionContext | undefined, options: ServiceProcessOptions): Promise<ServiceProcess> {
  const folder = mkdtempSync(path.join(tmpdir(), 'spaceport-process-'));
  const expertFile = path.join(folder, 'expert.json');
  writeFileSync(expertFile, JSON.stringify({ ...options.expert, projects: { default: 'sample', ...options.expert?.projects } }));
  const child = spawn(NODE, ['lib/main.ts'], { cwd: ROOT, env: serviceEnvironment(options, folder, expertFile), stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  const exited = once(child, 'exit').then(([code, signal]) => {
    running.delete(child);
    return { code, signal } as ProcessExit;
  });
  const lines = collectLines(child);
  const url = await listeningUrl(child, lines, exited);
  const service: ServiceProcess = {
    url,
    port: Number(new URL(url).port),
    pid: child.pid ?? 0,
    rssKilobytes: () => residentKilobytes(child.pid ?? 0),
    logEntries: () => lines.stdout.flatMap(parsedLine),
    running: () => child.exitCode === null && child.signalCode === null,
    exited,
    stop: () => stopProcess(child, exited),
  };
  t?.teardown(() => service.stop());
  return service;
}

function serviceEnvironment(options: ServiceProcessOptions, folder: string, expertFile: string): NodeJS.ProcessEnv {
  const { REDIS_URL: _redis, DATABASE_URL: _database, ...outer } = process.env;
  const env: NodeJS.ProcessEnv = {
    ...outer,
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: options.databaseUrl,
    JWT_SECRET: TEST_JWT_SECRET,
    DATA_DIR: path.join(folder, 'data'),
    PROJECTS_DIR: REPO_PROJECTS_DIR,
    EXPERT_CONFIG: expertFile,
    LOG_LEVEL: 'info',
  };
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

interface CollectedLines {
  stdout: string[];
  stderr: string[];
}

function collectLines(child: ChildProcess): CollectedLines {
  const lines: CollectedLines = { stdout: [], stderr: [] };
  for (const stream of ['stdout', 'stderr'] as const) {
    let partial = '';
    child[stream]?.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      lines[stream].push(...parts.filter(Boolean));
    });
  }
  return lines;
}

function parsedLine(line: string): Array<Record<string, unknown>> {
  try {
    return [JSON.parse(line) as Record<string, unknown>];
  } catch {
    return [];
  }
}

async function listeningUrl(child: ChildProcess, lines: CollectedLines, exited: Promise<ProcessExit>): Promise<string> {
  const deadline = Date.now() + START_LIMIT_MS;
  let ended = false;
  void exited.then(() => {
    ended = true;
  });
  while (Date.now() < deadline && !ended) {
    const line = lines.stdout.flatMap(parsedLine).find((entry) => entry.msg === 'spaceport listening');
    if (typeof line?.url === 'string') return line.url;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  child.kill('SIGKILL');
  throw new Error(`the service did not start: ${[...lines.stderr, ...lines.stdout].slice(-10).join('\n')}`);
}

async function stopProcess(child: ChildProcess, exited: Promise<ProcessExit>): Promise<ProcessExit> {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), STOP_LIMIT_MS);
    const outcome = await exited;
    clearTimeout(killer);
    return outcome;
  }
  return exited;
}

function residentKilobytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((entry) => entry.startsWith('VmRSS:'));
  if (line === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(line.replace(/\D+/g, ''));
}
