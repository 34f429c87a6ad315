import pg from 'pg';
import { newPool, onConnectionOf } from './pool.ts';
import type { StatementLimit } from './statement-limit.ts';

/**
 * How long a `select 1` through the pooler may wait for a server connection before the pooler is taken for busy, not
 * failing: PgBouncer answers at once when it has a server connection free, and refuses at once while it cannot log in
 * to PostgreSQL; it keeps the statement waiting while tenants' transactions hold every server connection.
 */
const POOLER_QUEUED_MS = 500;

/**
 * How long a check may take and still be a prompt answer (`answersPromptly`): a `select 1` on a kept connection, within
 * SPEC §7's 2 s for a statement cut 0.3 s after its 1.5 s limit; behind a pooler, its part's wait and a new login.
 */
const PROMPT_ANSWER_MS = 100;
const PROMPT_POOLER_ANSWER_MS = POOLER_QUEUED_MS + 400;

export interface HealthCheckOptions {
  /** Where the database is asked: `DATABASE_DIRECT_URL` behind a pooler, else the database's own URL. */
  readonly databaseUrl: string;
  /** `DATABASE_URL` when it names a pooler (`DATABASE_DIRECT_URL` set, and another URL): it must log a client in, and not refuse its statement. */
  readonly poolerUrl: string | undefined;
  readonly connectTimeoutMs: number;
  readonly onIdleError: (error: Error) => void;
  /** The statements' limit, if any: a `select 1` that a database gone never answers has its connection cut. */
  readonly limit: StatementLimit | undefined;
}

/**
 * Whether the database answers, asked on a connection no tenant can take (SPEC §17.2): for `/readyz`, `/healthz` and
 * the pool-busy decision. Behind a transaction-mode pooler, a connection kept through it is only a client of it, whose
 * `select 1` waits for one of the server connections tenants' transactions may all hold: a busy pooler would turn every
 * instance unready at once, and the balancer take the whole fleet out. There the database is asked on a direct
 * connection, and the pooler must log a new client in (PgBouncer does without a server connection once it has one
 * server's parameters) and not refuse its `select 1` (as PgBouncer does while it cannot log in to PostgreSQL), which may
 * wait: a busy pooler is not an unready instance; a pooler or database dead or hung is, as is a pooler cut off from it.
 */
export class HealthCheck {
  /** One connection of its own, which no tenant's statement can take. */
  readonly #reserved: pg.Pool;
  readonly #poolerUrl: string | undefined;
  readonly #connectTimeoutMs: number;
  readonly #limit: StatementLimit | undefined;
  /** The check under way, which every check asked meanwhile shares, and its database part alone. */
  #answering: { readonly whole: Promise<void>; readonly database: Promise<void> } | undefined;

  constructor({ databaseUrl, poolerUrl, connectTimeoutMs, onIdleError, limit }: HealthCheckOptions) {
    this.#poolerUrl = poolerUrl;
    this.#connectTimeoutMs = connectTimeoutMs;
    this.#limit = limit;
    // Kept open between checks (pg closes an idle one after 10 s): a check would otherwise open a
    // connection, and one slower than the check's limit (a distant database) would make it 503.
    this.#reserved = newPool(databaseUrl, 1, connectTimeoutMs, onIdleError, 0);
  }

  /**
   * Resolves when the database answers (and the pooler serves a client). Checks asked while one is under way share its
   * answer: anyone may ask, and a flood of checks queued for the one connection would outlast every check's limit.
   */
  answers(): Promise<void> {
    return this.#underWay().whole;
  }

  #underWay(): { readonly whole: Promise<void>; readonly database: Promise<void> } {
    if (this.#answering !== undefined) return this.#answering;
    const database = this.#databaseAnswers();
    // Both waited for, whichever fails first: one check at a time, however long the other part takes.
    const whole = Promise.allSettled([database, this.#poolerServes()]).then((parts) => {
      for (const part of parts) if (part.status === 'rejected') throw part.reason;
    });
    const answering = {
      whole: whole.finally(() => {
        this.#answering = undefined;
      }),
      database,
    };
    this.#answering = answering;
    return answering;
  }

  /**
   * Whether a check (shared with one under way) passes promptly: for an error path, which must not wait out a whole
   * check's limit. A `select 1` on a kept connection answers in milliseconds; behind a pooler, the pooler's part takes
   * up to `POOLER_QUEUED_MS` to call itself busy, after a new login. Later than that, the answer is no.
   */
  async answersPromptly(): Promise<boolean> {
    const timers: NodeJS.Timeout[] = [];
    const { whole, database } = this.#underWay();
    let databaseAnswered = false;
    void database.then(
      () => {
        databaseAnswered = true;
      },
      () => undefined,
    );
    // The database's own part answers in milliseconds, behind a pooler too: one that has not is no at once, not after
    // the pooler's part has had its time (a statement cut 0.3 s after its 1.5 s limit would answer past SPEC §7's 2 s).
    const late = new Promise<boolean>((resolve) => {
      timers.push(setTimeout(() => databaseAnswered || resolve(false), PROMPT_ANSWER_MS));
      if (this.#poolerUrl !== undefined) timers.push(setTimeout(resolve, PROMPT_POOLER_ANSWER_MS, false));
    });
    try {
      return await Promise.race([whole.then(() => true, () => false), late]);
    } finally {
      for (const timer of timers) clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.#reserved.end();
  }

  #databaseAnswers(): Promise<void> {
    return onConnectionOf(this.#reserved, async (client) => {
      const send = () => client.query('select 1');
      await (this.#limit === undefined ? send() : this.#limit.watch(client, send));
    });
  }

  /**
   * A new client each time: on a client connection kept open, any statement waits for a server connection, as long for
   * a busy pooler as for a hung one, and a pooler restarted would go unseen until the next statement on it. Its
   * `select 1` fails the check by its error alone: still waiting after `POOLER_QUEUED_MS`, the client leaves the queue.
   */
  async #poolerServes(): Promise<void> {
    if (this.#poolerUrl === undefined) return;
    const client = new pg.Client({ connectionString: this.#poolerUrl, connectionTimeoutMillis: this.#connectTimeoutMs });
    // A connection lost before `end`: the check fails with it; the event itself must not end the process.
    client.on('error', () => {});
    let timer: NodeJS.Timeout | undefined;
    try {
      try {
        await client.connect();
      } catch (error) {
        // Every place for a client taken: the pooler serves the clients it has, this instance's pool among them.
        if (isFullOfClients(error)) return;
        throw error;
      }
      const queued = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, POOLER_QUEUED_MS);
      });
      await Promise.race([client.query('select 1'), queued]);
    } finally {
      clearTimeout(timer);
      await client.end().catch(() => undefined);
    }
  }
}

/**
 * PgBouncer's refusal of a login beyond `max_client_conn`: a pooler busy with clients, like one busy with statements, not
 * an unready instance (every instance's check would fail at once, the balancer taking the whole fleet out).
 */
function isFullOfClients(error: unknown): boolean {
  // max_client_conn; PgBouncer 1.24's max_db_client_connections and max_user_client_connections alike.
  return error instanceof Error && /^no more connections allowed \(max_\w+\)$/.test(error.message);
}
