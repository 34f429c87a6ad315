import type { Knex } from 'knex';

/**
 * Whose request id an event holds (SPEC §17.5): `true` when the caller chose it (a well-formed
 * `X-Request-Id`), `false` when the service made it, null for a change made outside a request
 * and for the events written before this column. An expand migration: a nullable column, which
 * the release before, writing no value, leaves null; the tables' grants and row-level security
 * cover it already.
 */
const TABLES = ['space_events', 'account_events'];

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.schema.alterTable(table, (columns) => {
      columns.boolean('request_id_from_caller').nullable();
    });
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.schema.alterTable(table, (columns) => {
      columns.dropColumn('request_id_from_caller');
    });
  }
}
