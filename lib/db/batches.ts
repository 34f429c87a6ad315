import type { Knex } from 'knex';
import type { Json } from '../values/json.ts';
import { type LockRetryOptions, withLockRetries } from './lock-retries.ts';

/**
 * A data migration that must pass over every row of a table, cut into short transactions so that
 * no table's writes wait on it for more than a fraction of a second, and that carries on where it
 * stopped after a crash: each batch commits its work and its position together.
 */
export interface BatchJob<Position extends Json> {
  readonly name: string;
  /**
   * Does one batch in `trx`: at most `size` rows after `after` (undefined at the start), in a
   * stable order (a key). Returns the position reached, or undefined when nothing was left.
   */
  batch(trx: Knex.Transaction, after: Position | undefined, size: number): Promise<Position | undefined>;
}

export interface BatchOptions {
  /** A batch should take about this long; the size follows (100 ms). */
  readonly targetMs?: number;
  /** Rows of the first batch (1000), and the bounds of the size (10 to 10 000). */
  readonly firstSize?: number;
  readonly minSize?: number;
  readonly maxSize?: number;
  readonly lockRetries?: LockRetryOptions;
}

export const BATCH_PROGRESS_TABLE = 'knex_migrations_batches';

/**
 * Runs `job` batch after batch until it reports nothing left; resolves with the number of
 * batches. A job found half-done (its row in `knex_migrations_batches`) resumes after its saved
 * position. Each batch runs under `withLockRetries`, and its size is halved when a batch took
 * over twice the target and doubled when it took under half of it.
 */
export async function inBatches<Position extends Json>(knex: Knex, job: BatchJob<Position>, options: BatchOptions = {}): Promise<number> {
  const { targetMs = 100, firstSize = 1000, minSize = 10, maxSize = 10_000 } = options;
  await knex.raw(`create table if not exists ${BATCH_PROGRESS_TABLE} (name text primary key, position jsonb not null, updated_at timestamptz not null default now())`);
  let after = await savedPosition<Position>(knex, job.name);
  let size = firstSize;
  let batches = 0;
  for (;;) {
    const started = performance.now();
    const reached = await withLockRetries(knex, (trx) => batchAndSave(trx, job, after, size), { label: `data migration ${job.name}`, ...options.lockRetries });
    if (reached === undefined) break;
    batches++;
    after = reached;
    const tookMs = performance.now() - started;
    if (tookMs > targetMs * 2) size = Math.max(minSize, Math.floor(size / 2));
    else if (tookMs < targetMs / 2) size = Math.min(maxSize, size * 2);
  }
  await knex(BATCH_PROGRESS_TABLE).where({ name: job.name }).delete();
  return batches;
}

async function batchAndSave<Position extends Json>(trx: Knex.Transaction, job: BatchJob<Position>, after: Position | undefined, size: number): Promise<Position | undefined> {
  const reached = await job.batch(trx, after, size);
  if (reached !== undefined) {
    await trx.raw(
      `insert into ${BATCH_PROGRESS_TABLE} (name, position) values (?, ?::jsonb) on conflict (name) do update set position = excluded.position, updated_at = now()`,
      [job.name, JSON.stringify(reached)],
    );
  }
  return reached;
}

async function savedPosition<Position extends Json>(knex: Knex, name: string): Promise<Position | undefined> {
  const row = (await knex(BATCH_PROGRESS_TABLE).where({ name }).first('position')) as { position: Position } | undefined;
  return row?.position;
}
