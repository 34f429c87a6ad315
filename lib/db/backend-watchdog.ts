import pg from 'pg';
import { CONNECT_TIMEOUT_MS } from './connect.ts';

const CANCEL_GRACE_MS = 300;

/** The watchdog's own statements are short; one unanswered this long drops its connection. */
const WATCHDOG_QUERY_TIMEOUT_MS = 2000;

type Signal = 'pg_cancel_backend' | 'pg_terminate_backend';

const SIGNAL_SQL = (signal: Signal) => `select ${signal}(pid) from pg_stat_activity where application_name = any($1) and pid <> pg_backend_pid()`;

/**
 * Ends a statement the service gave up on (SPEC §17.3): a cut socket leaves the backend running, and cancellation acts
 * only where PostgreSQL checks for it (not in long planning, nor a handler that swallows it), so cancel, then terminate.
 * Found by its tag (`application_name`): behind a transaction-mode pooler the service never learns a backend's pid.
 */
export class BackendWatchdog {
  readonly #url: string;
  readonly #connectTimeoutMs: number;
  #client: Promise<pg.Client> | undefined;
  #stopped = false;
  /** Tags waiting for their signal: sent together, one statement at a time on the one connection. */
  readonly #waiting: Record<Signal, Set<string>> = { pg_cancel_backend: new Set(), pg_terminate_backend: new Set() };
  #sending: Promise<void> | undefined;

  constructor(url: string, connectTimeoutMs = CONNECT_TIMEOUT_MS) {
    this.#url = url;
    this.#connectTimeoutMs = connectTimeoutMs;
  }

  async end(tag: string): Promise<void> {
    await this.#signal('pg_cancel_backend', tag);
    await new Promise((resolve) => setTimeout(resolve, CANCEL_GRACE_MS).unref());
    await this.#signal('pg_terminate_backend', tag);
  }

  stop(): void {
    this.#stopped = true;
    void this.#client?.then((client) => client.end()).catch(() => undefined);
    this.#client = undefined;
  }

  #signal(signal: Signal, tag: string): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    this.#waiting[signal].add(tag);
    this.#sending ??= this.#sendWaiting().finally(() => {
      this.#sending = undefined;
    });
    return this.#sending;
  }

  /** Sends what waits, and what came meanwhile, until nothing does: statements ended at once share one exchange. */
  async #sendWaiting(): Promise<void> {
    while (!this.#stopped) {
      const signal = (['pg_cancel_backend', 'pg_terminate_backend'] as const).find((each) => this.#waiting[each].size > 0);
      if (signal === undefined) return;
      const tags = [...this.#waiting[signal]];
      this.#waiting[signal].clear();
      await this.#send(signal, tags);
    }
  }

  async #send(signal: Signal, tags: string[]): Promise<void> {
    const client = this.#connected();
    try {
      await (await client).query(SIGNAL_SQL(signal), [tags]);
    } catch {
      // A connection that failed is made again for the next statement given up on.
      if (this.#client === client) this.#client = undefined;
      void client.then((failed) => failed.end()).catch(() => undefined);
    }
  }

  #connected(): Promise<pg.Client> {
    if (this.#client !== undefined) return this.#client;
    const client = new pg.Client({
      connectionString: this.#url,
      connectionTimeoutMillis: this.#connectTimeoutMs,
      query_timeout: WATCHDOG_QUERY_TIMEOUT_MS,
      application_name: 'spaceport-watchdog',
    });
    client.on('error', () => {});
    this.#client = client.connect().then(() => client);
    return this.#client;
  }
}
