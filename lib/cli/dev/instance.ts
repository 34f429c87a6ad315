import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Agent, type ServerResponse } from 'node:http';
import { createInterface } from 'node:readline';
import { loadConfig } from '../../config/index.ts';
import { expertSchema } from '../../config/schema.ts';

/** What a service process said while starting: its URL, or why it stopped. */
export type StartOutcome = { readonly ok: true; readonly url: string } | { readonly ok: false; readonly report: string };

export interface InstanceOptions {
  readonly generation: number;
  readonly env: NodeJS.ProcessEnv;
  /** Every line the process writes, but stderr's before it starts: the `report` of a failed start. */
  readonly onOutput: (line: string, stream: 'stdout' | 'stderr') => void;
}

const SERVICE_ENTRY = new URL('../../main.ts', import.meta.url).pathname;

/** One `node lib/main.ts` process on a free loopback port, ready when it says so on its IPC channel. */
export class ServiceInstance {
  readonly generation: number;
  /** Keep-alive connections from the front to this instance only. */
  readonly agent = new Agent({ keepAlive: true });
  readonly started: Promise<StartOutcome>;
  /** Settles when the process has exited, whyever it did, saying how: `exit code 1`, `signal SIGKILL`. */
  readonly exited: Promise<string>;
  /** The `limits.handlerMs` the instance answers 504 after: see `retire`. */
  readonly handlerMs: number;
  readonly #child: ChildProcess;
  #url: string | undefined;
  #inFlight = 0;
  #idle: Array<() => void> = [];

  constructor(options: InstanceOptions) {
    this.generation = options.generation;
    const env = { ...options.env, PORT: '0', HOST: '127.0.0.1' };
    this.handlerMs = configuredHandlerMs(env);
    // With the Node arguments `make dev` was given (Makefile's SERVE), as `make run` serves.
    this.#child = spawn(process.execPath, [...process.execArgv, SERVICE_ENTRY], { env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    this.exited = once(this.#child, 'exit').then(
      ([code, signal]) => (signal === null ? `exit code ${code}` : `signal ${signal}`),
      (error: Error) => error.message,
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

  /** Its requests get what `make run` gives them: their handler's limit, then SIGTERM's drain. */
  async retire(): Promise<void> {
    if (this.#inFlight > 0) {
      await Promise.race([new Promise<void>((resolve) => this.#idle.push(resolve)), delay(this.handlerMs)]);
    }
    this.#signal('SIGTERM');
    await this.exited;
    this.agent.destroy();
  }

  /** Stops the instance now, cutting what it is running (make dev is stopping). */
  async stop(): Promise<void> {
    this.agent.destroy();
    this.#signal('SIGTERM');
    await this.exited;
  }

  /** An instance that never listened: on SIGTERM it would run project code, the very code that did not settle. */
  async kill(): Promise<void> {
    this.#signal('SIGKILL');
    await this.exited;
  }

  #signal(signal: NodeJS.Signals): void {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill(signal);
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

/** Read as the instance reads it; a configuration it cannot read stops it before it serves, default unused. */
function configuredHandlerMs(env: NodeJS.ProcessEnv): number {
  try {
    return loadConfig({ env }).config.limits.handlerMs;
  } catch {
    return expertSchema.parse({}).limits.handlerMs;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
