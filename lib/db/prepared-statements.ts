import { createHash } from 'node:crypto';
import type pg from 'pg';

/** SQLSTATEs of a named statement the server connection does not hold, or holds already: a pooler gave another one. */
const PREPARED_ELSEWHERE = new Set(['26000', '42P05']);

/** Longer statements (an insert of many rows) go unnamed: parsed once, never kept. */
const LONGEST_KEPT = 4096;

/** Statements each connection keeps prepared; the least recently used is closed for a new one. */
const KEPT_PER_CONNECTION = 100;

/** Names remembered by text before starting over: each is a hash of its text, computed once. */
const NAMES_REMEMBERED = 1000;

/**
 * What to send a connection for one statement: its name ('' for unnamed), the names to Close
 * first (one to make room, and the statement's own, which the server connection may hold
 * already), and whether to Parse it.
 */
export interface StatementMessages {
  readonly name: string;
  readonly close: readonly string[];
  readonly parse: boolean;
}

/** Parsed with each use, as pg sends a statement without a name. */
export const UNNAMED: StatementMessages = { name: '', close: [], parse: true };

/**
 * Statements prepared once per connection, so that PostgreSQL parses each text once, not with
 * every statement (SPEC §15.2 still holds: a name says nothing of the tenant). Each name is a hash
 * of its text, so a server connection holding a name holds that very text, whoever prepared it
 * there. A transaction-mode pooler without prepared statements (PgBouncer before 1.21, or
 * `max_prepared_statements = 0`) hands a transaction another server connection: the first
 * statement that meets one lacking a name, or holding it already, fails before anything ran and
 * is sent again unnamed, as every statement is from then on. A text that a migration made
 * stale, or that failed to be analysed (its columns, types or tables changed), goes unnamed from
 * then on: a pooler that keeps statements for its clients (PgBouncer 1.21 and later) keeps the
 * server's statement of that text, stale, whatever name it is sent under, until its server
 * connections close.
 */
export class PreparedStatements {
  /**
   * By connection, the names it may hold, least recently used first: `true` once sent, `false`
   * after a failure, when the server may or may not hold it (closed and parsed again at its next
   * use). A failed one still counts, so the server never holds more than the limit.
   */
  readonly #held = new WeakMap<pg.Connection, Map<string, boolean>>();
  readonly #names = new Map<string, string>();
  /** Texts parsed with every use since they failed as above; kept apart, as `#names` is cleared when full. */
  readonly #unnamed = new Set<string>();
  readonly #onGivenUp: () => void;
  #kept = true;

  constructor(onGivenUp: () => void = () => {}) {
    this.#onGivenUp = onGivenUp;
  }

  get kept(): boolean {
    return this.#kept;
  }

  /** The messages for `text` on `connection`, counting it as held from now on. */
  messages(connection: pg.Connection, text: string): StatementMessages {
    if (!this.#kept || text.length > LONGEST_KEPT) return UNNAMED;
    if (this.#unnamed.has(text)) return UNNAMED;
    const name = this.#nameOf(text);
    const held = this.#heldBy(connection);
    const known = held.get(name);
    held.delete(name);
    held.set(name, true);
    if (known === true) return { name, close: [], parse: false };
    const close = [name];
    if (held.size > KEPT_PER_CONNECTION) {
      const [oldest] = held.keys();
      if (oldest !== undefined) {
        held.delete(oldest);
        close.push(oldest);
      }
    }
    return { name, close, parse: true };
  }

  /** After a failed statement: `name` may or may not have been parsed, so its next use closes and parses it again. */
  forget(connection: pg.Connection, name: string): void {
    const held = this.#held.get(connection);
    if (held?.has(name) === true) held.set(name, false);
  }

  /** Whether `error` says the connection's statements are not its own to keep: if so, none is prepared again. */
  givenUpOver(error: unknown): boolean {
    if (!PREPARED_ELSEWHERE.has((error as { code?: string }).code ?? '')) return false;
    if (this.#kept) {
      this.#kept = false;
      this.#onGivenUp();
    }
    return true;
  }

  /**
   * After `text` failed: a stale plan, or an error of analysis (SQLSTATE class 42: a column,
   * type, operator or table not as it was), makes it go unnamed from now on, parsed with every use.
   */
  failed(text: string, error: unknown): void {
    if (!this.#names.has(text) || !(isStalePlan(error) || isAnalysisError(error))) return;
    if (this.#unnamed.size >= NAMES_REMEMBERED) this.#unnamed.clear();
    this.#unnamed.add(text);
  }

  #heldBy(connection: pg.Connection): Map<string, boolean> {
    let held = this.#held.get(connection);
    if (held === undefined) {
      held = new Map();
      this.#held.set(connection, held);
    }
    return held;
  }

  #nameOf(text: string): string {
    let name = this.#names.get(text);
    if (name === undefined) {
      if (this.#names.size >= NAMES_REMEMBERED) this.#names.clear();
      name = `spaceport_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
      this.#names.set(text, name);
    }
    return name;
  }
}

/**
 * "cached plan must not change result type": a prepared statement whose columns a migration changed (`select *` after
 * a column was added); parsed anew, it runs. Told by the routine that raises it, as the message may be translated.
 */
export function isStalePlan(error: unknown): boolean {
  const { code, routine } = error as { code?: string; routine?: string };
  return code === '0A000' && routine === 'RevalidateCachedQuery';
}

function isAnalysisError(error: unknown): boolean {
  return (error as { code?: string }).code?.startsWith('42') === true;
}
