import { execFile, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * Programs the tests run beside the service (HAProxy, PgBouncer): Debian's package, installed
 * when missing where we can (root with apt-get, as in CI and the usual container), run in the
 * foreground and stopped with the test process at the latest.
 */
const run = promisify(execFile);
const STOP_LIMIT_MS = 5000;
/** The end of a daemon's stderr kept for error messages. */
const KEPT_STDERR = 4000;

/** Daemons still running when the test process ends go with it. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Where a Debian package's program is, or why it cannot be had here. */
export type Binary = { path: string } | { missing: string };

/**
 * The first of `candidates` that runs with `versionArguments`, the Debian package `name` being
 * installed with apt-get first when none does and we are root.
 */
export async function debianBinary(name: string, candidates: readonly string[], versionArguments: readonly string[]): Promise<Binary> {
  const found = await locate(candidates, versionArguments);
  if (found) return { path: found };
  if (process.getuid?.() !== 0) return { missing: `${name} is not installed, and installing it needs root (apt-get install ${name})` };
  try {
    const apt = { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: 240_000 };
    await run('apt-get', ['-o', 'DPkg::Lock::Timeout=120', 'update'], apt);
    await run('apt-get', ['-o', 'DPkg::Lock::Timeout=120', 'install', '-y', '--no-install-recommends', name], apt);
  } catch (error) {
    return { missing: `apt-get install ${name} failed: ${(error as Error).message.split('\n')[0]}` };
  }
  const installed = await locate(candidates, versionArguments);
  return installed ? { path: installed } : { missing: `apt-get installed ${name}, but no ${name} binary was found` };
}

async function locate(candidates: readonly string[], versionArguments: readonly string[]): Promise<string | undefined> {
  for (const candidate of candidates) {
    try {
      await run(candidate, [...versionArguments]);
      return candidate;
    } catch {
      // not there: try the next place
    }
  }
  return undefined;
}

/** A daemon in the foreground of a child process. */
export interface Daemon {
  readonly child: ChildProcess;
  /** The end of what it wrote on stderr, for error messages. */
  stderr(): string;
  /** SIGTERM, then SIGKILL if it is still there after 5 s. Resolves once it has exited. */
  stop(): Promise<void>;
}

/** Starts `binary` with `args`, its stdout ignored and the end of its stderr kept. */
export function startDaemon(binary: string, args: readonly string[], options: Pick<SpawnOptions, 'uid' | 'gid' | 'cwd'> = {}): Daemon {
  const child = spawn(binary, args, { ...options, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-KEPT_STDERR);
  });
  running.add(child);
  // A binary that cannot be started at all emits `error` and may never emit `exit`.
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', (error) => {
      stderr += `\n${error.message}`;
      resolve();
    });
  }).finally(() => running.delete(child));
  return { child, stderr: () => stderr.trim(), stop: () => stopChild(child, exited) };
}

async function stopChild(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), STOP_LIMIT_MS);
  await exited;
  clearTimeout(killer);
}
