import type { Knex } from 'knex';

/**
 * The document store (SPEC §9): one row per document, tenant first in every key (SPEC §4.3).
 * The GIN index serves equality filters (`doc @> ...`); accounts get a unique username index.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('documents', (table) => {
    table.string('tenant', 63).notNullable().references('name').inTable('tenants');
    table.string('collection', 128).notNullable();
    table.string('id', 128).notNullable();
    table.jsonb('doc').notNullable();
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.primary(['tenant', 'collection', 'id']);
  });
  await knex.raw('create index documents_doc_gin on documents using gin (doc jsonb_path_ops)');
  await knex.raw(
    "create unique index documents_accounts_username on documents (tenant, (doc->>'username')) where collection = 'accounts'",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('documents');
}
