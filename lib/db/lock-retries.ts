import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';

/**
 * Statements queue behind DDL waiting for its lock, so one long read would stop all traffic for as long as the
 * migration waits: the lock is asked for under a short `lock_timeout`, again after a pause that lets the queue drain
 * (GitLab's `with_lock_retries`). Traffic then waits at most one attempt's `lock_timeout`.
 */
export interface LockAttempt {
  readonly lockTimeoutMs: number;
  readonly pauseMs: number;
}

/** About two minutes; a request queued behind an attempt waits half a second at most. */
export const LOCK_ATTEMPTS: readonly LockAttempt[] = Object.freeze(
  Array.from({ length: 30 }, (_, index) => ({
    lockTimeoutMs: index < 10 ? 100 : index < 20 ? 200 : 500,
    pauseMs: Math.min(100 * 2 ** index, 5000),
  })),
);

export interface LockRetryOptions {
  readonly attempts?: readonly LockAttempt[];
  readonly onRetry?: (retry: LockRetry) => void;
  /** What is being done, for the messages (`migration 2026…_x.ts`). */
  readonly label?: string;
  /** A connection of knex's pool, idle meanwhile, to watch for blockers on (else one from the pool each time). */
  readonly watchConnection?: unknown;
}

export interface LockRetry {
  readonly label: string;
  readonly attempt: number;
  readonly attempts: number;
  readonly pauseMs: number;
  readonly blockers: readonly Blocker[];
}

export interface Blocker {
  readonly pid: number;
  readonly user: string | null;
  readonly application: string | null;
  readonly state: string | null;
  readonly stateSeconds: number | null;
  readonly transactionSeconds: number | null;
  readonly query: string | null;
  /** The lock the waiting backend asked for: `documents (AccessExclusiveLock)`, `advisory lock 7361504201 (ExclusiveLock)`. */
  readonly wanted: string | null;
}

export class LockNotAvailableError extends Error {
  override name = 'LockNotAvailableError';
  readonly blockers: readonly Blocker[];

  constructor(label: string, attempts: number, elapsedMs: number, blockers: readonly Blocker[]) {
    super(`${label} could not take its lock in ${attempts} attempts over ${Math.round(elapsedMs / 1000)} s: ${describeBlockers(blockers)}`);
    this.blockers = blockers;
  }
}

/** 55P03: lock_not_available. */
export function isLockTimeout(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '55P03';
}

/** The statement that bounds one transaction's lock waits (0: no bound), a literal, so linters reading the SQL see it. */
export function setLockTimeout(milliseconds: number): string {
  return `set local lock_timeout = '${Math.max(0, Math.round(milliseconds))}ms'`;
}

/** Runs `work` in a transaction whose lock waits are bounded, again from the start while the lock does not come: it must be repeatable. */
export async function withLockRetries<Result>(knex: Knex, work: (trx: Knex.Transaction) => Promise<Result>, options: LockRetryOptions = {}): Promise<Result> {
  return retryLocks(knex, options, (attempt, watch) =>
    knex.transaction(async (trx) => {
      await trx.raw(setLockTimeout(attempt.lockTimeoutMs));
      await watch(trx);
      return work(trx);
    }),
  );
}

export type WatchTransaction = (trx: Knex.Transaction) => Promise<void>;

/** For callers whose transactions knex opens (the migration runner): `run` calls `watch` once it has set the `lock_timeout`. */
export async function retryLocks<Result>(knex: Knex, options: LockRetryOptions, run: (attempt: LockAttempt, watch: WatchTransaction) => Promise<Result>): Promise<Result> {
  const attempts = options.attempts ?? LOCK_ATTEMPTS;
  const label = options.label ?? 'a migration';
  const started = performance.now();
  for (let index = 0; ; index++) {
    const attempt = attempts[index] as LockAttempt;
    const watcher = new BlockerWatcher(knex, options.watchConnection);
    try {
      return await run(attempt, (trx) => watcher.watch(trx));
    } catch (error) {
      const blockers = await watcher.stop();
      if (!isLockTimeout(error)) throw error;
      if (index + 1 >= attempts.length) throw new LockNotAvailableError(label, attempts.length, performance.now() - started, blockers);
      options.onRetry?.({ label, attempt: index + 1, attempts: attempts.length, pauseMs: attempt.pauseMs, blockers });
      await sleep(jittered(attempt.pauseMs));
    } finally {
      await watcher.stop();
    }
  }
}

/** ±20 %, so that several waiting migrations or batches do not retry in step. */
function jittered(milliseconds: number): number {
  return milliseconds * (0.8 + Math.random() * 0.4);
}

const WATCH_INTERVAL_MS = 40;

/** Looked at while the attempt waits (every 40 ms, so a 100 ms attempt is seen): once it gives up, pg_locks forgets the blocker. */
const BLOCKERS_SQL = `
  select b.pid, b.usename as "user", b.application_name as application, b.state,
         extract(epoch from now() - b.state_change)::float8 as "stateSeconds",
         extract(epoch from now() - b.xact_start)::float8 as "transactionSeconds",
         left(b.query, 300) as query,
         (select case when w.locktype = 'advisory' then 'advisory lock ' || ((w.classid::int8 << 32) | w.objid::int8)
                      else coalesce(w.relation::regclass::text, w.locktype) end || ' (' || w.mode || ')'
            from pg_locks w where w.pid = ? and not w.granted limit 1) as wanted
    from pg_stat_activity b
   where exists (select from pg_stat_activity m where m.pid = ? and m.wait_event_type = 'Lock')
     and b.pid = any(pg_blocking_pids(?))`;

class BlockerWatcher {
  readonly #knex: Knex;
  readonly #connection: unknown;
  #timer: NodeJS.Timeout | undefined;
  #looking: Promise<void> = Promise.resolve();
  #seen: Blocker[] = [];

  constructor(knex: Knex, connection: unknown) {
    this.#knex = knex;
    this.#connection = connection;
  }

  async watch(trx: Knex.Transaction): Promise<void> {
    const { rows } = await trx.raw<{ rows: Array<{ pid: number }> }>('select pg_backend_pid() as pid');
    const pid = rows[0]?.pid;
    if (pid === undefined || this.#timer !== undefined) return;
    const look = () => {
      this.#looking = this.#looking.then(() => this.#look(pid));
    };
    setTimeout(look, WATCH_INTERVAL_MS / 2).unref();
    this.#timer = setInterval(look, WATCH_INTERVAL_MS);
    this.#timer.unref();
  }

  async stop(): Promise<Blocker[]> {
    clearInterval(this.#timer);
    await this.#looking;
    return this.#seen;
  }

  async #look(pid: number): Promise<void> {
    try {
      const query = this.#knex.raw<{ rows: Blocker[] }>(BLOCKERS_SQL, [pid, pid, pid]);
      const { rows } = await (this.#connection === undefined ? query : query.connection(this.#connection));
      if (rows.length > 0) this.#seen = rows;
    } catch {
      // A look that fails (the pool busy, the server going away) leaves the last one seen.
    }
  }
}

/** `held by pid 4242 (postgres, psql, idle in transaction for 21 s, transaction open 25 s): select …`. */
export function describeBlockers(blockers: readonly Blocker[]): string {
  if (blockers.length === 0) return 'no blocking backend was seen (the lock was held only briefly each time)';
  const wanted = blockers[0]?.wanted;
  const held = blockers.map((blocker) => {
    const who = [blocker.user, blocker.application ? `application "${blocker.application}"` : null].filter(Boolean).join(', ');
    const state = blocker.state === null ? 'state unknown' : `${blocker.state}${blocker.stateSeconds === null ? '' : ` for ${Math.round(blocker.stateSeconds)} s`}`;
    const transaction = blocker.transactionSeconds === null ? '' : `, transaction open ${Math.round(blocker.transactionSeconds)} s`;
    return `pid ${blocker.pid} (${who ? `${who}, ` : ''}${state}${transaction}): ${(blocker.query ?? '').replace(/\s+/g, ' ').trim()}`;
  });
  return `${wanted ? `the lock on ${wanted} is ` : ''}held by ${held.join('; ')} (end it with select pg_terminate_backend(pid), or try again once it is done)`;
}
