import type { Knex } from 'knex';
import { createIndexConcurrently, dropIndexConcurrently, type Waivers } from '../lib/db/migration-tools.ts';

export const config = { transaction: false };

export const waivers: Waivers = {
  'require-lock-timeout':
    'Built and dropped concurrently: SHARE UPDATE EXCLUSIVE, which no read or write waits behind. A lock_timeout would only stop the build part-way; it is then dropped and built again on the next run.',
};

/**
 * The unique username index again, on `account_username is not null` instead of `collection =
 * 'accounts'`: the same rows (the generated column is null outside accounts) and the same
 * uniqueness, but usable by a plan made before the values are known. `collection = $2` proves
 * nothing about a literal; `account_username = $3` proves the column is not null. A lookup by
 * username is then planned once per connection and kept (lib/db/scoped-query.ts), where a plan
 * for every lookup cost PostgreSQL 53 µs of its 143. The old index goes in the contract
 * migration `contract/20261205000017_drop_collection_username_index`.
 */
export async function up(knex: Knex): Promise<void> {
  await createIndexConcurrently(knex, 'documents_username_per_tenant', 'on documents (tenant, account_username) where account_username is not null', { unique: true });
}

export async function down(knex: Knex): Promise<void> {
  await dropIndexConcurrently(knex, 'documents_username_per_tenant');
}
