import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import type { ExecutionContext } from 'ava';
import { TEST_CONNECT_TIMEOUT_MS } from './database.ts';
import { TEST_JWT_SECRET, testDatabaseUrl } from './service.ts';
import { scratchFolder } from './scratch.ts';

export interface MainProcess {
  child: ChildProcess;
  url: string;
  /** Every line the service wrote on stdout so far. */
  lines: string[];
  /** Resolves with the exit code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts the real service, `node lib/main.ts`, over the test file's database and resolves once it
 * listens (seen in its info-level log, so `LOG_LEVEL` must stay at info or below); it is killed
 * after the test `t` if it is still running (without `t`, the caller stops it). `cwd`: the checkout
 * to run, the repository by default (a rolling upgrade runs two releases).
 */
export async function startMain(t: ExecutionContext | undefined, env: Record<string, string>, cwd?: string): Promise<MainProcess> {
  // As `make run` (the Makefile's SERVE): without this V8 flag, each document query leaves old-generation
  // garbage, and a service's memory grows for longer before it settles.
  const child = spawn(process.execPath, ['--no-allocation-site-pretenuring', 'lib/main.ts'], {
    cwd,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: await testDatabaseUrl(),
      JWT_SECRET: TEST_JWT_SECRET,
      DATA_DIR: scratchFolder('main'),
      // At load 13 on 2 cores, the first connection took longer than the default 1.5 s: "start-up failed: timeout expired".
      DATABASE_CONNECT_TIMEOUT_MS: String(TEST_CONNECT_TIMEOUT_MS),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t?.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const lines: string[] = [];
  const url = await listeningUrl(child, lines);
  return { child, url, lines, exited };
}

function listeningUrl(child: ChildProcess, lines: string[]): Promise<string> {
  const output = child.stdout;
  if (output === null) throw new Error('the service was started without a stdout pipe');
  return new Promise((resolve, reject) => {
    createInterface({ input: output }).on('line', (line) => {
      lines.push(line);
      const entry = line.startsWith('{') ? (JSON.parse(line) as { msg?: string; url?: string }) : {};
      if (entry.msg === 'spaceport listening' && entry.url) resolve(entry.url);
    });
    child.once('exit', (code) => reject(new Error(`the service exited with ${code} before listening`)));
  });
}

/** True when nothing listens at `url` any more. */
export function connectionRefused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/** Polls `condition` until it holds (true) or `limitMs` passes (false). */
export async function until(condition: () => boolean | Promise<boolean>, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}
