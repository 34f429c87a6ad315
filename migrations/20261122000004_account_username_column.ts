import type { Knex } from 'knex';
import type { Waivers } from '../lib/db/migration-tools.ts';

/**
 * Written before the rules of SPEC §18: every database past its date ran it, and one that has not
 * yet upgrades with the service stopped (README, For DBAs). What it holds, and why:
 */
export const waivers: Waivers = {
  'adding-field-with-default': 'A stored generated column cannot be added without rewriting documents under its lock: PostgreSQL has no other way.',
  'require-concurrent-index-deletion': 'The index is swapped for one of the same name and meaning in one transaction, so no statement ever finds it missing.',
  'require-concurrent-index-creation': 'The index is swapped for one of the same name and meaning in one transaction, so no statement ever finds it missing.',
};

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
