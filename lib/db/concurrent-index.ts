import type { Knex } from 'knex';

/**
 * Refused inside a transaction: the migration says `export const config = { transaction: false }`. An invalid index
 * left by a failed build is dropped and built again, so the migration can simply run again.
 * `definition` is what follows the name: `on documents (tenant, collection) where …`.
 */
export async function createIndexConcurrently(knex: Knex, name: string, definition: string, { unique = false } = {}): Promise<void> {
  if (await invalidIndexExists(knex, name)) await dropIndexConcurrently(knex, name);
  await knex.raw(`create ${unique ? 'unique ' : ''}index concurrently if not exists ?? ${definition}`, [name]);
}

/** Drops an index without holding its table's reads and writes (outside a transaction, as above). */
export async function dropIndexConcurrently(knex: Knex, name: string): Promise<void> {
  await knex.raw('drop index concurrently if exists ??', [name]);
}

async function invalidIndexExists(knex: Knex, name: string): Promise<boolean> {
  const { rows } = await knex.raw<{ rows: unknown[] }>(
    'select from pg_index i join pg_class c on c.oid = i.indexrelid where c.relname = ? and c.relnamespace = current_schema()::regnamespace and not i.indisvalid',
    [name],
  );
  return rows.length > 0;
}
