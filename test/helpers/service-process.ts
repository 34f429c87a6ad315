import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import type { ExpertInput } from '../../lib/config/index.ts';
import { startMain } from './main-process.ts';
import { TEST_CONNECT_TIMEOUT_MS } from './database.ts';
import { REPO_PROJECTS_DIR } from './sample.ts';
import { scratchFolder } from './scratch.ts';

const STOP_LIMIT_MS = 15_000;

/** How a service process ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** `node lib/main.ts` in a process of its own, serving the repository's sample project (or `projectsDir`). */
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
  /** Sends a signal (SIGTERM: the graceful stop). */
  signal(name: NodeJS.Signals): void;
  /** Resolves once the process has exited. */
  readonly exited: Promise<ProcessExit>;
  /** SIGTERM, SIGKILL if it is still there after 15 s; resolves with how it ended. */
  stop(): Promise<ProcessExit>;
}

export interface ServiceProcessOptions {
  databaseUrl: string;
  /** Written to the file EXPERT_CONFIG names; the sample is the default project. */
  expert?: ExpertInput;
  /** REDIS_URL (unset unless given, whatever the test's own environment says). */
  redisUrl?: string;
  /** PROJECTS_DIR; the repository's projects by default. */
  projectsDir?: string;
  /** More environment variables, e.g. DATABASE_DIRECT_URL. */
  environment?: Record<string, string>;
  /** The checkout to run (a release made by the test: test/helpers/releases.ts); the repository by default. */
  release?: string;
}

/**
 * Starts the service over the repository's projects with `options`, as `make run` would, and
 * resolves once it listens; stopped after the test.
 */
export async function startServiceProcess(t: ExecutionContext, options: ServiceProcessOptions): Promise<ServiceProcess> {
  const expertFile = path.join(scratchFolder('expert'), 'expert.json');
  writeFileSync(expertFile, JSON.stringify({ ...options.expert, projects: { default: 'sample', ...options.expert?.projects } }));
  const main = await startMain(t, {
    DATABASE_URL: options.databaseUrl,
    EXPERT_CONFIG: expertFile,
    PROJECTS_DIR: options.projectsDir ?? REPO_PROJECTS_DIR,
    // An empty value counts as unset (lib/config): no Redis unless the test names one.
    REDIS_URL: options.redisUrl ?? '',
    LOG_LEVEL: 'info',
    // A loaded machine may take longer than the 1.5 s default to start a backend; tests of that limit set their own.
    DATABASE_CONNECT_TIMEOUT_MS: String(TEST_CONNECT_TIMEOUT_MS),
    ...options.environment,
  }, options.release);
  const { child } = main;
  const running = () => child.exitCode === null && child.signalCode === null;
  const service: ServiceProcess = {
    url: main.url,
    port: Number(new URL(main.url).port),
    pid: child.pid ?? 0,
    rssKilobytes: () => residentKilobytes(child.pid ?? 0),
    logEntries: () => main.lines.flatMap(parsedLine),
    running,
    signal: (name) => child.kill(name),
    exited: main.exited,
    stop: async () => {
      if (!running()) return main.exited;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_LIMIT_MS);
      const outcome = await main.exited;
      clearTimeout(killer);
      return outcome;
    },
  };
  t.teardown(() => service.stop());
  return service;
}

function parsedLine(line: string): Array<Record<string, unknown>> {
  try {
    return [JSON.parse(line) as Record<string, unknown>];
  } catch {
    return [];
  }
}

function residentKilobytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((entry) => entry.startsWith('VmRSS:'));
  if (line === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(line.replace(/\D+/g, ''));
}
