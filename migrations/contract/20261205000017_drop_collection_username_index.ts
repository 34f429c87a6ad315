import type { Knex } from 'knex';
import { createIndexConcurrently, dropIndexConcurrently, type Waivers } from '../../lib/db/migration-tools.ts';

export const config = { transaction: false };

export const waivers: Waivers = {
  'require-lock-timeout':
    'Built and dropped concurrently: SHARE UPDATE EXCLUSIVE, which no read or write waits behind. A lock_timeout would only stop the build part-way; it is then dropped and built again on the next run.',
};

/** `documents_username_per_tenant` (the expand migration before this one) holds the same usernames to the same rule. */
export async function up(knex: Knex): Promise<void> {
  await dropIndexConcurrently(knex, 'documents_accounts_username');
}

export async function down(knex: Knex): Promise<void> {
  await createIndexConcurrently(knex, 'documents_accounts_username', "on documents (tenant, account_username) where collection = 'accounts'", { unique: true });
}
