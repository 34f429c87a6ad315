import type { Knex } from 'knex';

/**
 * Spaces (SPEC §6): tenant first in the primary key (SPEC §4.3), so the key is also the
 * per-tenant unique constraint that decides concurrent creates of one name (SPEC §6.4).
 * `name` is varchar(64): PostgreSQL counts characters, i.e. code points, as the spec does.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('spaces', (table) => {
    table.string('tenant', 63).notNullable().references('name').inTable('tenants');
    table.string('name', 64).notNullable();
    table.specificType('schemas', 'text[]').notNullable().defaultTo('{}');
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.primary(['tenant', 'name']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('spaces');
}
