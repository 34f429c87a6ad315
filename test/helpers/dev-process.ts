import { spawn, type ChildProcess } from 'node:child_process';
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

/**
 * Sends requests to `url` from `workers` loops, each a few milliseconds after the last answer,
 * until `stop` is called; a failure is anything but a 200 (a network error included).
 */
export function continuousRequests(url: string, workers = 2, pauseMs = 5): { readonly seen: () => LoadReport; stop: () => Promise<LoadReport> } {
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
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return seen();
    },
  };
}
