import type pg from 'pg';
import type { BackendWatchdog } from './backend-watchdog.ts';

/** How often running statements are checked against the limit: a statement is cut within this of it. */
const CHECK_EVERY_MS = 50;

/** A statement being watched: when it started, and its tag in PostgreSQL (`BackendWatchdog`). */
interface Watched {
  readonly started: number;
  readonly tag: string | undefined;
}

/**
 * The backstop of the statement time limit (SPEC §7: a database that stops answering is a 503
 * within 2 s, never a hang). PostgreSQL cancels a statement over the limit itself
 * (`statement_timeout`); this cuts the connection of a statement still unanswered after that,
 * when the database does not answer at all. It is one timer for the whole pool rather than pg's
 * `query_timeout`, which sets a timer for every statement: that timer, holding the statement
 * and through its async context the whole request, made each document query leave ~7 KB for the
 * old generation. A cut statement fails as "Connection terminated" and the pool drops the
 * connection. Cutting the socket leaves the backend running, so a statement watched with its tag
 * is also ended in PostgreSQL by the `watchdog` (cancelled, then terminated).
 */
export class StatementLimit {
  readonly #limitMs: number;
  readonly #started = new Map<pg.ClientBase, Watched>();
  readonly #timer: NodeJS.Timeout;
  readonly #watchdog: BackendWatchdog | undefined;

  constructor(limitMs: number, watchdog?: BackendWatchdog) {
    this.#limitMs = limitMs;
    this.#watchdog = watchdog;
    this.#timer = setInterval(() => this.#cutOverdue(), CHECK_EVERY_MS);
    this.#timer.unref();
  }

  /** Runs `send` (statements on `client`, tagged `tag` in PostgreSQL when given), watched. */
  async watch<Result>(client: pg.ClientBase, send: () => Promise<Result>, tag?: string): Promise<Result> {
    this.#started.set(client, { started: performance.now(), tag });
    try {
      return await send();
    } finally {
      this.#started.delete(client);
    }
  }

  /** Ends in PostgreSQL the statement running on `client` now, if one is (its request has ended). */
  endRunning(client: pg.ClientBase): void {
    const tag = this.#started.get(client)?.tag;
    if (tag !== undefined) void this.#watchdog?.end(tag);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#watchdog?.stop();
  }

  #cutOverdue(): void {
    const now = performance.now();
    const overdue = [...this.#started].filter(([, { started }]) => now - started > this.#limitMs);
    if (overdue.length === 0) return;
    // After the process itself was busy, due timers run before input is read: an answer may be
    // waiting on the socket already. setImmediate runs once the event loop has read it.
    setImmediate(() => {
      for (const [client, watched] of overdue) {
        if (this.#started.get(client) !== watched) continue;
        this.#started.delete(client);
        if (watched.tag !== undefined) void this.#watchdog?.end(watched.tag);
        // pg's public `end()` closes the connection at once while a statement is running
        // (outside pipeline mode, which the service does not use); pg documents no more than
        // "disconnects", so test/db/statement-limit.test.ts pins it. A pool's clients are pg
        // Clients, whose type leaves `end` out (`release` being the way back to the pool).
        void (client as pg.Client).end();
      }
    });
  }
}
