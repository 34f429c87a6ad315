import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/** `node lib/cli/dev.ts` (what `make dev` runs) as a child process, its output collected. */
export class DevProcess {
  readonly child: ChildProcess;
  #output = '';

  constructor(env: NodeJS.ProcessEnv) {
    this.child = spawn(process.execPath, ['lib/cli/dev.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [this.child.stdout, this.child.stderr]) stream?.on('data', (chunk: Buffer) => (this.#output += chunk.toString('utf8')));
  }

  /** stdout and stderr so far, interleaved as they came. */
  get output(): string {
    return this.#output;
  }

  /** Resolves once the output contains `text`; rejects after `timeoutMs` showing what it said. */
  async waitForOutput(text: string, timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.#output.includes(text)) {
      if (Date.now() > deadline) throw new Error(`no "${text}" in make dev's output after ${timeoutMs} ms:\n${this.#output}`);
      if (this.child.exitCode !== null) throw new Error(`make dev exited (${this.child.exitCode}):\n${this.#output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** How many processes make dev has started and not yet seen end: its service instances (with DATABASE_URL set). */
  children(): number {
    try {
      return execFileSync('ps', ['-o', 'pid=', '--ppid', String(this.child.pid)], { encoding: 'utf8' }).trim().split('\n').length;
    } catch {
      // ps exits 1 when it lists nothing.
      return 0;
    }
  }

  /** SIGTERM, then the exit code (null when a signal ended it). */
  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.child.exitCode;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    return code;
  }
}

export interface LoadReport {
  readonly answered: number;
  readonly failures: readonly string[];
  /** Every distinct answer body, in the order first seen. */
  readonly bodies: readonly string[];
}

export interface ContinuousRequests {
  readonly seen: () => LoadReport;
  /** Resolves once an answer had `body`. */
  readonly waitFor: (body: string, timeoutMs?: number) => Promise<void>;
  readonly stop: () => Promise<LoadReport>;
}

/**
 * Sends requests to `url` from `workers` loops, each a few milliseconds after the last answer,
 * until `stop` is called; a failure is anything but a 200 (a network error included).
 */
export function continuousRequests(url: string, workers = 2, pauseMs = 5): ContinuousRequests {
  let running = true;
  let answered = 0;
  const failures: string[] = [];
  const bodies: string[] = [];
  const loop = async () => {
    while (running) {
      try {
        const response = await fetch(url);
        const body = await response.text();
        answered += 1;
        if (response.status !== 200) failures.push(`${response.status} ${body}`);
        else if (!bodies.includes(body)) bodies.push(body);
      } catch (error) {
        failures.push(String((error as Error).cause ?? error));
      }
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  };
  const loops = Array.from({ length: workers }, loop);
  const seen = () => ({ answered, failures: [...failures], bodies: [...bodies] });
  return {
    seen,
    waitFor: async (body, timeoutMs = 90_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!bodies.includes(body)) {
        if (Date.now() > deadline) throw new Error(`no answer ${body} after ${timeoutMs} ms; seen ${JSON.stringify(seen())}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return seen();
    },
  };
}
