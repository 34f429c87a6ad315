import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tenants', (table) => {
    table.string('name', 63).primary();
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex('tenants').insert({ name: 'default' });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('tenants');
}
