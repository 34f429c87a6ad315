import type { Knex } from 'knex';
import type { Waivers } from '../lib/db/migration-tools.ts';

/**
 * Written before the rules of SPEC §18: every database past its date ran it, and one that has not
 * yet upgrades with the service stopped (README, For DBAs). What it holds, and why:
 */
export const waivers: Waivers = {
  'require-concurrent-index-creation': 'spaces holds one short row per space: the index is built in milliseconds, in the transaction that adds the column it covers.',
};

/**
 * The trash of spaces (SPEC §6.7): a deleted space keeps its row, with `deleted_at` set, until it
 * is restored or purged. Creating a name purges its trashed copy first, so a name has at most
 * one row, live or trashed, and the primary key `(tenant, name)` still decides concurrent
 * creates. The column is on `spaces`, whose row-level security policy covers it already. The
 * index serves the purge, which looks for a tenant's oldest trashed rows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('spaces', (table) => {
    table.timestamp('deleted_at', { useTz: true }).nullable();
  });
  await knex.raw('create index spaces_trashed on spaces (tenant, deleted_at) where deleted_at is not null');
}

/**
 * Trashed spaces are purged first: without the column they would come back to life. Forced
 * row-level security would show the owner no row (no tenant is set here), so it is lifted for
 * this delete alone, inside the migration's transaction.
 */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table spaces no force row level security');
  await knex('spaces').whereNotNull('deleted_at').delete();
  await knex.raw('alter table spaces force row level security');
  await knex.raw('drop index spaces_trashed');
  await knex.schema.alterTable('spaces', (table) => {
    table.dropColumn('deleted_at');
  });
}
