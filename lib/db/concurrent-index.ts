import type { Knex } from 'knex';

/**
 * Refused inside a transaction: the migration says `export const config = { transaction: false }`. An invalid index
 * left by a failed build is dropped and built again, so the migration can simply run again.
 * `definition` is what follows the name: `on documents (tenant, collection) where …`.
 */
export async function createIndexConcurrently(knex: Knex, name: string, definition: string, { unique = false } = {}): Promise<void> {
  const state = await indexState(knex, name);
  // Not even `if not exists` for one that is there: a Citus coordinator marks it invalid (citusdata/citus#8338).
  if (state === 'valid') return;
  if (state === 'invalid') await dropIndexConcurrently(knex, name);
  await knex.raw(`create ${unique ? 'unique ' : ''}index concurrently if not exists ?? ${definition}`, [name]);
}

/** Drops an index without holding its table's reads and writes (outside a transaction, as above). */
export async function dropIndexConcurrently(knex: Knex, name: string): Promise<void> {
  await knex.raw('drop index concurrently if exists ??', [name]);
}

export type IndexState = 'valid' | 'invalid' | 'absent';

/**
 * An index of the current schema, by name (`?`): `invalid` when a concurrent build failed or was cut short. For a pg
 * client, `INDEX_STATE.replace('?', '$1')`; the rows go to `indexStateOf`.
 */
export const INDEX_STATE =
  'select i.indisvalid and i.indisready as valid from pg_index i join pg_class c on c.oid = i.indexrelid where c.relname = ? and c.relnamespace = current_schema()::regnamespace';

export function indexStateOf(rows: ReadonlyArray<{ valid: boolean }>): IndexState {
  if (rows.length === 0) return 'absent';
  return rows[0]?.valid === true ? 'valid' : 'invalid';
}

async function indexState(knex: Knex, name: string): Promise<IndexState> {
  return indexStateOf((await knex.raw<{ rows: Array<{ valid: boolean }> }>(INDEX_STATE, [name])).rows);
}
