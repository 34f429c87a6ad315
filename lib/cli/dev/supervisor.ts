import type { Logger } from 'pino';
import { displayPath } from '../../projects/report.ts';
import type { DevFront } from './front.ts';
import { ServiceInstance } from './instance.ts';
import { mountedRoutes } from './mounted-routes.ts';

export interface SupervisorOptions {
  readonly front: DevFront;
  /** The environment of every instance (DATABASE_URL set: they all share one database). */
  readonly env: NodeJS.ProcessEnv;
  readonly logger: Logger;
  /** Where an instance's log lines go (pino-pretty). */
  readonly writeLog: (line: string) => void;
}

/**
 * Starts a new instance of the service on every change and switches the front to it once it
 * listens; the previous instance then finishes its requests and stops. An instance that does
 * not start (a route file that no longer loads) is reported, and the previous one keeps serving.
 */
export class Supervisor {
  readonly #options: SupervisorOptions;
  #generation = 0;
  #running: Promise<void> | undefined;
  #pending: Set<string> | undefined;
  #stopping = false;

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
    this.#running = this.#replace(changed).finally(() => {
      this.#running = undefined;
      const pending = this.#pending;
      this.#pending = undefined;
      if (pending !== undefined && !this.#stopping) void this.reload([...pending]);
    });
    return this.#running;
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#running;
    await this.#options.front.serve(undefined)?.stop();
  }

  async #replace(changed: readonly string[]): Promise<void> {
    const { front, logger } = this.#options;
    const cause = changed.length === 0 ? 'start' : `${describeFiles(changed)} changed`;
    if (changed.length > 0) logger.info(`${cause}: starting a new instance`);
    const instance = this.#startInstance();
    const outcome = await instance.started;
    if (!outcome.ok) {
      const fallback = front.current === undefined ? 'nothing serves until a change fixes it' : `instance ${front.current.generation} keeps serving`;
      logger.error(`${cause}: instance ${instance.generation} did not start; ${fallback}`);
      process.stderr.write(`${outcome.report}\n`);
      await instance.stop();
      return;
    }
    const previous = front.serve(instance);
    const routes = await mountedRoutes(outcome.url).catch(() => ['(the route list could not be read)']);
    logger.info({ routes }, `${cause}: instance ${instance.generation} serving, ${routes.length} project routes mounted`);
    if (previous !== undefined) void previous.retire();
  }

  #startInstance(): ServiceInstance {
    const { env, writeLog, front, logger } = this.#options;
    this.#generation += 1;
    const instance = new ServiceInstance({
      generation: this.#generation,
      env,
      onOutput: (line, stream) => (stream === 'stdout' ? writeLog(line) : process.stderr.write(`${line}\n`)),
    });
    void instance.exited.then(() => {
      if (front.current !== instance || this.#stopping) return;
      front.serve(undefined);
      logger.error(`instance ${instance.generation} stopped; requests wait for the next one (save a file to start it)`);
    });
    return instance;
  }
}

/** `projects/shop/api/routes.js`, or `lib/app.ts and 3 more files`. */
function describeFiles(files: readonly string[]): string {
  const [first] = files;
  const shown = displayPath(first);
  return files.length === 1 ? shown : `${shown} and ${files.length - 1} more file${files.length === 2 ? '' : 's'}`;
}
