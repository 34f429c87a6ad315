import pg from 'pg';
import { CONNECT_TIMEOUT_MS } from './connect.ts';

/** How long a cancelled backend has to stop before it is terminated. */
const CANCEL_GRACE_MS = 300;

/** The watchdog's own statements are short; one unanswered this long drops its connection. */
const WATCHDOG_QUERY_TIMEOUT_MS = 2000;

const SIGNAL_SQL = (signal: 'pg_cancel_backend' | 'pg_terminate_backend') =>
  `select ${signal}(pid) from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid()`;

/**
 * Ends in PostgreSQL the work of a statement the service gave up on (SPEC §17.3). Cutting the
 * service's socket does not: the backend runs on until it next writes to it, and PostgreSQL
 * answers cancellation (statement_timeout, `pg_cancel_backend`) only where its code checks for
 * it, which parsing and planning of large statements, or a PL/pgSQL handler that swallows the
 * cancel, may not do for a long time. So the watchdog asks for a cancel, and terminates the
 * backend if it still runs the statement a moment later.
 *
 * The backend is found by the tag its statement carries as `application_name` (set for the
 * statement's transaction alone, with the statement: `queryInScope`), from a connection of the
 * watchdog's own. A process id would not do: through a transaction-mode pooler the service never
 * learns which backend runs a statement, and that backend serves other clients before and after.
 */
export class BackendWatchdog {
  readonly #url: string;
  readonly #connectTimeoutMs: number;
  #client: Promise<pg.Client> | undefined;
  #stopped = false;

  /** `connectTimeoutMs`: the wait for its connection (`DATABASE_CONNECT_TIMEOUT_MS`), `CONNECT_TIMEOUT_MS` unless given. */
  constructor(url: string, connectTimeoutMs = CONNECT_TIMEOUT_MS) {
    this.#url = url;
    this.#connectTimeoutMs = connectTimeoutMs;
  }

  /** Cancels the backend running the statement tagged `tag`, then terminates it if the cancel did not take. */
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

  async #signal(signal: 'pg_cancel_backend' | 'pg_terminate_backend', tag: string): Promise<void> {
    if (this.#stopped) return;
    const client = this.#connected();
    try {
      await (await client).query(SIGNAL_SQL(signal), [tag]);
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
