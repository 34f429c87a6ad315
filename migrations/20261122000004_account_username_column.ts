import type { Knex } from 'knex';

/**
 * Account lookups by username keep their index under row-level security. PostgreSQL lets a
 * policy-protected query use an index only for leakproof conditions: `doc->>'username' = $1`
 * is not one (`->>` is not leakproof), `account_username = $1` on a plain text column is. So the
 * username is kept in a stored generated column and the unique index moves onto it, with
 * the same meaning: unique per tenant, among accounts, compared as text.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw("alter table documents add column account_username text generated always as (case when collection = 'accounts' then doc->>'username' end) stored");
  await knex.raw('drop index documents_accounts_username');
  await knex.raw("create unique index documents_accounts_username on documents (tenant, account_username) where collection = 'accounts'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index documents_accounts_username');
  await knex.raw('alter table documents drop column account_username');
  await knex.raw("create unique index documents_accounts_username on documents (tenant, (doc->>'username')) where collection = 'accounts'");
}
