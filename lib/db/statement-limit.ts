import type pg from 'pg';
import type { BackendWatchdog } from './backend-watchdog.ts';

const CHECK_EVERY_MS = 50;

interface Watched {
  readonly started: number;
  readonly tag: string | undefined;
  /** Of the rows received so far, as PostgreSQL sent them. */
  bytes: number;
  /** Why the service cut its connection, if it did. */
  cutFor: 'time' | 'size' | undefined;
}

/**
 * A statement still unanswered past its limit, whose connection the service cut: the database gone, or only busy (a
 * pooler's queue, a statement deaf to its cancel), which the health check tells apart. 08006: unreachable unless shown otherwise.
 */
export class StatementUnanswered extends Error {
  override name = 'StatementUnanswered';
  readonly code = '08006';
  constructor(cause: unknown) {
    super('the database did not answer the statement within its time limit: its connection was cut', { cause });
  }
}

/** A statement the service ended at its time limit while the database answers: as PostgreSQL's own cancel at `statement_timeout` (57014). */
export class StatementCutAtLimit extends Error {
  override name = 'StatementCutAtLimit';
  readonly code = '57014';
  constructor(cause: unknown) {
    super('the statement went unanswered past its time limit while the database answers (a pooler busy with other statements, or one deaf to its cancel): it was ended', { cause });
  }
}

/** pg holds every row of an answer until the last has come: one statement may not bring back more than the bound. */
export class ResultTooLarge extends Error {
  override name = 'ResultTooLarge';
  constructor(maxBytes: number) {
    super(`a database statement's rows came to more than ${maxBytes} bytes (limits.resultBytes), and it was stopped: read fewer at a time (limit() with a range or skip(), or a projection)`);
  }
}

/**
 * The backstop of `statement_timeout` (SPEC §7: a 503 within 2 s, never a hang): cuts the connection of a statement
 * still unanswered. One timer for the pool, not pg's `query_timeout`, whose timer per statement held the request
 * through its async context (~7 KB for the old generation a query). The `watchdog` ends the backend left running.
 * Within its time, a statement's rows are bounded too (`maxResultBytes`, on the connections it `follow`s): in 1.5 s a
 * `find({}).toArray()` of a large collection brought 146 MB into the heap every tenant's requests share.
 */
export class StatementLimit {
  readonly #limitMs: number;
  readonly #maxResultBytes: number;
  readonly #started = new Map<pg.ClientBase, Watched>();
  readonly #timer: NodeJS.Timeout;
  readonly #watchdog: BackendWatchdog | undefined;

  constructor(limitMs: number, watchdog?: BackendWatchdog, maxResultBytes = Number.POSITIVE_INFINITY) {
    this.#limitMs = limitMs;
    this.#maxResultBytes = maxResultBytes;
    this.#watchdog = watchdog;
    this.#timer = setInterval(() => this.#cutOverdue(), CHECK_EVERY_MS);
    this.#timer.unref();
  }

  /** Counts the rows of the statements watched on `client` from now on, as they arrive. */
  follow(client: pg.ClientBase): void {
    (client as pg.Client).connection.on('dataRow', (row: { length: number }) => this.#received(client, row.length));
  }

  async watch<Result>(client: pg.ClientBase, send: () => Promise<Result>, tag?: string): Promise<Result> {
    const watched: Watched = { started: performance.now(), tag, bytes: 0, cutFor: undefined };
    this.#started.set(client, watched);
    try {
      const result = await send();
      // Rows past the bound that came in the socket read with the statement's end are parsed, and the statement
      // answered, after its connection was cut: it fails all the same, whatever the read's boundaries were.
      if (watched.cutFor === 'size') throw new ResultTooLarge(this.#maxResultBytes);
      return result;
    } catch (error) {
      if (watched.cutFor === 'size') throw new ResultTooLarge(this.#maxResultBytes);
      throw watched.cutFor === 'time' ? new StatementUnanswered(error) : error;
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

  #received(client: pg.ClientBase, bytes: number): void {
    const watched = this.#started.get(client);
    if (watched === undefined) return;
    watched.bytes += bytes;
    if (watched.bytes <= this.#maxResultBytes) return;
    this.#cut(client, watched, 'size');
  }

  #cutOverdue(): void {
    const now = performance.now();
    const overdue = [...this.#started].filter(([, { started }]) => now - started > this.#limitMs);
    if (overdue.length === 0) return;
    // After the process itself was busy, due timers run before input is read: an answer may be
    // waiting on the socket already. setImmediate runs once the event loop has read it.
    setImmediate(() => {
      for (const [client, watched] of overdue) {
        if (this.#started.get(client) === watched) this.#cut(client, watched, 'time');
      }
    });
  }

  #cut(client: pg.ClientBase, watched: Watched, reason: 'time' | 'size'): void {
    watched.cutFor = reason;
    this.#started.delete(client);
    if (watched.tag !== undefined) void this.#watchdog?.end(watched.tag);
    // pg documents `end()` as no more than "disconnects" (test/db/statement-limit.test.ts pins that it
    // cuts a running statement); a pool client's type leaves it out.
    void (client as pg.Client).end();
  }
}
