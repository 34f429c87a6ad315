import type { Logger } from 'pino';
import { displayPath } from '../../projects/problems.ts';
import type { DevFront } from './front.ts';
import { ServiceInstance, type StartOutcome } from './instance.ts';
import { mountedRoutes } from './mounted-routes.ts';

/**
 * Measured on 2 cores loaded five times over: 3 s for one project, 6 to 13 s for 200, 18 to 26 s
 * for 1000 (under 1 s idle). A start given up too early could never be mended by a save, while
 * one that never settles only delays its report: so several times the slowest seen.
 */
export const START_LIMIT_MS = 120_000;
/** An instance that stops on its own after serving this long is not part of a crash loop. */
const CRASH_LOOP_MS = 60_000;
/** The longest wait before restarting an instance that keeps stopping on its own. */
const RESTART_DELAY_LIMIT_MS = 30_000;

export interface SupervisorOptions {
  readonly front: DevFront;
  /** The environment of every instance (DATABASE_URL set: they all share one database). */
  readonly env: NodeJS.ProcessEnv;
  readonly logger: Logger;
  /** Where an instance's log lines go (pino-pretty). */
  readonly writeLog: (line: string) => void;
  /** `START_LIMIT_MS`, shorter in tests. */
  readonly startLimitMs: number;
}

/**
 * A new instance on every change, switched to once it listens; the previous one then finishes
 * its requests and stops. One that does not start is reported and the previous keeps serving.
 */
export class Supervisor {
  readonly #options: SupervisorOptions;
  #generation = 0;
  #running: Promise<void> | undefined;
  #starting: ServiceInstance | undefined;
  #pending: Set<string> | undefined;
  #stopping = false;
  /** The instance last switched to, until it is replaced or stops (the front may have left it already). */
  #serving: { readonly instance: ServiceInstance; readonly since: number } | undefined;
  /** Instances in a row that stopped on their own soon after they started serving. */
  #crashes = 0;
  #restartTimer: NodeJS.Timeout | undefined;

  constructor(options: SupervisorOptions) {
    this.#options = options;
  }

  /** Replaces the instance; changes arriving meanwhile make one more replacement afterwards. */
  reload(changed: readonly string[] = []): Promise<void> {
    if (this.#running !== undefined) {
      this.#pending ??= new Set();
      for (const file of changed) this.#pending.add(file);
      return this.#running;
    }
    clearTimeout(this.#restartTimer);
    if (changed.length === 0) return this.#run('start');
    const cause = `${describeFiles(changed)} changed`;
    this.#options.logger.info(`${cause}: starting a new instance`);
    this.#crashes = 0;
    return this.#run(cause);
  }

  /** Stops the instance serving and any still starting (a start can take long, or hang). */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#restartTimer);
    this.#options.front.serve(undefined);
    await Promise.all([this.#starting?.kill(), this.#serving?.instance.stop()]);
    await this.#running;
  }

  #run(cause: string): Promise<void> {
    this.#running = this.#replace(cause).finally(() => {
      this.#running = undefined;
      const pending = this.#pending;
      this.#pending = undefined;
      if (pending !== undefined && !this.#stopping) void this.reload([...pending]);
    });
    return this.#running;
  }

  async #replace(cause: string): Promise<void> {
    const { front, logger, startLimitMs } = this.#options;
    const instance = this.#startInstance();
    this.#starting = instance;
    const outcome = await settledWithin(instance.started, startLimitMs);
    this.#starting = undefined;
    if (this.#stopping) {
      await (outcome?.ok ? instance.stop() : instance.kill());
      return;
    }
    if (outcome === undefined || !outcome.ok) {
      this.#reportNotStarted(cause, instance, outcome);
      await instance.kill();
      return;
    }
    const previous = this.#serving?.instance;
    this.#serving = { instance, since: Date.now() };
    front.serve(instance);
    const routes = await mountedRoutes(outcome.url).catch(() => ['(the route list could not be read)']);
    logger.info({ routes }, `${cause}: instance ${instance.generation} serving, ${routes.length} project routes mounted`);
    if (previous !== undefined) void previous.retire();
  }

  /** One line, and the report the instance wrote if it stopped; `outcome` is undefined when it did not start in time. */
  #reportNotStarted(cause: string, instance: ServiceInstance, outcome: Extract<StartOutcome, { ok: false }> | undefined): void {
    const { front, logger, startLimitMs } = this.#options;
    const fallback = front.current === undefined ? 'nothing serves until a change fixes it' : `instance ${front.current.generation} keeps serving`;
    if (outcome === undefined) {
      logger.error(`${cause}: instance ${instance.generation} did not start within ${startLimitMs / 1000} s (does an import never settle?); ${fallback}`);
      return;
    }
    logger.error(`${cause}: instance ${instance.generation} did not start; ${fallback}`);
    process.stderr.write(`${outcome.report}\n`);
  }

  #startInstance(): ServiceInstance {
    const { env, writeLog } = this.#options;
    this.#generation += 1;
    const instance = new ServiceInstance({
      generation: this.#generation,
      env,
      onOutput: (line, stream) => (stream === 'stdout' ? writeLog(line) : process.stderr.write(`${line}\n`)),
    });
    void instance.exited.then((how) => this.#stoppedOnItsOwn(instance, how));
    return instance;
  }

  /** The next instance starts at once, or after a wait that doubles while instances keep stopping soon after starting. */
  #stoppedOnItsOwn(instance: ServiceInstance, how: string): void {
    const { front, logger } = this.#options;
    if (this.#serving?.instance !== instance || this.#stopping) return;
    const crashLoop = Date.now() - this.#serving.since < CRASH_LOOP_MS;
    this.#serving = undefined;
    if (front.current === instance) front.serve(undefined);
    if (this.#running !== undefined) {
      logger.error(`instance ${instance.generation} stopped on its own (${how}); the instance starting replaces it`);
      return;
    }
    this.#crashes = crashLoop ? this.#crashes + 1 : 1;
    const delayMs = this.#crashes === 1 ? 0 : Math.min(RESTART_DELAY_LIMIT_MS, 1000 * 2 ** (this.#crashes - 2));
    logger.error(`instance ${instance.generation} stopped on its own (${how}); a new instance starts ${delayMs === 0 ? 'now' : `in ${delayMs / 1000} s`}`);
    this.#restartTimer = setTimeout(() => {
      if (this.#running === undefined && !this.#stopping) void this.#run(`restart after instance ${instance.generation} stopped`);
    }, delayMs);
  }
}

/** What an instance said as it started, or undefined once `ms` passed without a word. */
function settledWithin(started: Promise<StartOutcome>, ms: number): Promise<StartOutcome | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ms, undefined);
  });
  return Promise.race([started, limit]).finally(() => clearTimeout(timer));
}

/** `projects/shop/api/routes.js`, or `lib/app.ts and 3 more files`. */
function describeFiles(files: readonly string[]): string {
  const [first] = files;
  const shown = displayPath(first);
  return files.length === 1 ? shown : `${shown} and ${files.length - 1} more file${files.length === 2 ? '' : 's'}`;
}
