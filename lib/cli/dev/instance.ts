import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Agent, type ServerResponse } from 'node:http';
import { createInterface } from 'node:readline';

/** What a service process said while starting: its URL, or why it stopped. */
export type StartOutcome = { readonly ok: true; readonly url: string } | { readonly ok: false; readonly report: string };

export interface InstanceOptions {
  readonly generation: number;
  readonly env: NodeJS.ProcessEnv;
  /**
   * Every line the process writes: its log (pino's JSON lines) on stdout, and on stderr what it
   * writes once started. What it writes on stderr before is the `report` of a failed start.
   */
  readonly onOutput: (line: string, stream: 'stdout' | 'stderr') => void;
}

const SERVICE_ENTRY = new URL('../../main.ts', import.meta.url).pathname;
/** Requests still running on a retired instance get this long, as the service's own drain does. */
const RETIRE_LIMIT_MS = 10_000;

/**
 * One `node lib/main.ts` process on a free loopback port: the real service, started afresh so it
 * loads every changed file. It is ready when it says so on its IPC channel (`lib/main.ts`).
 */
export class ServiceInstance {
  readonly generation: number;
  /** Keep-alive connections from the front to this instance only. */
  readonly agent = new Agent({ keepAlive: true });
  readonly started: Promise<StartOutcome>;
  /** Settles when the process has exited, whyever it did. */
  readonly exited: Promise<void>;
  readonly #child: ChildProcess;
  #url: string | undefined;
  #inFlight = 0;
  #idle: Array<() => void> = [];

  constructor(options: InstanceOptions) {
    this.generation = options.generation;
    // With the Node arguments `make dev` was given (Makefile's SERVE), as `make run` serves.
    this.#child = spawn(process.execPath, [...process.execArgv, SERVICE_ENTRY], {
      env: { ...options.env, PORT: '0', HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    this.exited = once(this.#child, 'exit').then(
      () => undefined,
      () => undefined,
    );
    this.started = this.#watchStart(options.onOutput);
  }

  /** Where the instance listens, once it has started. */
  get url(): string | undefined {
    return this.#url;
  }

  /** Counts a request the front hands to this instance until its answer is over. */
  track(response: ServerResponse): void {
    this.#inFlight += 1;
    response.once('close', () => {
      this.#inFlight -= 1;
      if (this.#inFlight === 0) for (const resolve of this.#idle.splice(0)) resolve();
    });
  }

  /**
   * Stops the instance once the front has stopped sending it requests: after those it is
   * running finish (10 s at most), it gets SIGTERM and drains like `make run` does.
   */
  async retire(): Promise<void> {
    if (this.#inFlight > 0) {
      await Promise.race([new Promise<void>((resolve) => this.#idle.push(resolve)), delay(RETIRE_LIMIT_MS)]);
    }
    await this.stop();
  }

  async stop(): Promise<void> {
    this.agent.destroy();
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill('SIGTERM');
    await this.exited;
  }

  #watchStart(onOutput: InstanceOptions['onOutput']): Promise<StartOutcome> {
    const stderr: string[] = [];
    return new Promise((resolve) => {
      this.#child.on('message', (message: { listening?: unknown }) => {
        if (typeof message?.listening !== 'string' || this.#url !== undefined) return;
        this.#url = message.listening;
        resolve({ ok: true, url: message.listening });
      });
      createInterface({ input: this.#child.stdout as NodeJS.ReadableStream }).on('line', (line) => onOutput(line, 'stdout'));
      createInterface({ input: this.#child.stderr as NodeJS.ReadableStream }).on('line', (line) => {
        if (this.#url === undefined) stderr.push(line);
        else onOutput(line, 'stderr');
      });
      this.#child.once('exit', (code, signal) => {
        const report = stderr.join('\n').trim() || `the service exited (${signal ?? `code ${code}`}) before listening`;
        resolve({ ok: false, report });
      });
    });
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
