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
  /**
   * Every line the process writes: its log (pino's JSON lines) on stdout, and on stderr what it
   * writes once started. What it writes on stderr before is the `report` of a failed start.
   */
  readonly onOutput: (line: string, stream: 'stdout' | 'stderr') => void;
}

const SERVICE_ENTRY = new URL('../../main.ts', import.meta.url).pathname;

/**
 * One `node lib/main.ts` process on a free loopback port: the real service, started afresh so it
 * loads every changed file. It is ready when it says so on its IPC channel (`lib/main.ts`).
 */
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

  /**
   * Stops the instance once the front has stopped sending it requests. Those it is running get
   * what `make run` would give them: their handler's limit (after which the instance itself
   * answers 504), then SIGTERM, whose drain lets what still runs finish (8 s at most, see
   * `lib/http/drain.ts`) and closes the front's connections as it does any client's.
   */
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

  /**
   * Ends an instance that never listened: it has no request to finish, and what it would run
   * on SIGTERM is project code, the very code that did not settle (a handler of its own may ignore it).
   */
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

/**
 * The handler limit the instance reads as it starts, from the same environment and expert file
 * (`lib/main.ts` does not say it). A configuration it cannot read stops the instance before it
 * serves, so the default then is never used to retire it.
 */
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
