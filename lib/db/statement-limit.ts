import type pg from 'pg';
import type { BackendWatchdog } from './backend-watchdog.ts';

const CHECK_EVERY_MS = 50;

interface Watched {
  readonly started: number;
  readonly tag: string | undefined;
}

/**
 * The backstop of `statement_timeout` (SPEC §7: a 503 within 2 s, never a hang): cuts the connection of a statement
 * still unanswered. One timer for the pool, not pg's `query_timeout`, whose timer per statement held the request
 * through its async context (~7 KB for the old generation a query). The `watchdog` ends the backend left running.
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

  async watch<Result>(client: pg.ClientBase, send: () => Promise<Result>, tag?: string): Promise<Result> {
    this.#started.set(client, { started: performance.now(), tag });
    try {
      return await send();
    } finally {
      this.#started.delete(client);
    }
  }

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
        // pg documents `end()` as no more than "disconnects" (test/db/statement-limit.test.ts pins that it
        // cuts a running statement); a pool client's type leaves it out.
        void (client as pg.Client).end();
      }
    });
  }
}
