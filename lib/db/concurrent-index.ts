import type { Knex } from 'knex';

/**
 * Builds an index on a table that already holds rows without holding its writes: `CREATE INDEX
 * CONCURRENTLY`, which PostgreSQL refuses inside a transaction, so the migration that calls it
 * says `export const config = { transaction: false }`. The build waits for the transactions that
 * were writing the table when it began to end, and holds nobody up meanwhile. A build that failed
 * half-way (a crash, a unique index meeting duplicates) leaves an invalid index behind: it is
 * dropped and built again, so the migration can simply be run again.
 *
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
