import { hashPassword } from '../../lib/auth/passwords.ts';
import { createKnex } from '../../lib/db/connect.ts';
import { migrateLatest } from '../../lib/db/migrations.ts';

/** How many seeded usernames getOneAccount cycles through, spread over the whole range. */
const LOOKUPS = 10;

/** `E000001`: the SQL spelling of a seeded username; `username()` below is the JavaScript one. */
const USERNAME_SQL = "'E' || lpad(n::text, 6, '0')";

/**
 * Migrates the scratch database and seeds `count` accounts into the `default` tenant in one
 * SQL statement, shaped as `saveAccount` (lib/auth/accounts.ts) stores them: a `documents` row in
 * the `accounts` collection whose `id` is the document's `_id` (24 hex characters), with
 * `username`, a scrypt `password` hash, `role` and a few employee fields. One hash serves every
 * row: hashing 100 000 passwords would take minutes and the lookup never reads it.
 * Returns the usernames to look up.
 */
export async function seedAccounts(databaseUrl: string, count: number): Promise<string[]> {
  const knex = createKnex(databaseUrl);
  try {
    await migrateLatest(knex);
    const password = await hashPassword('bench-password');
    await knex.raw(
      `insert into documents (tenant, collection, id, doc)
       select 'default', 'accounts', seeded.id, jsonb_build_object(
         '_id', seeded.id, 'username', seeded.username, 'password', ?::text, 'role', 'member',
         'name', 'Employee ' || seeded.n, 'email', lower(seeded.username) || '@example.com', 'department', 'D' || (seeded.n % 50))
       from (select n, lpad(to_hex(n), 24, '0') as id, ${USERNAME_SQL} as username from generate_series(1, ?::int) as n) as seeded`,
      [password, count],
    );
    await knex.raw('analyze documents');
  } finally {
    await knex.destroy();
  }
  return Array.from({ length: Math.min(LOOKUPS, count) }, (_, index) => username(1 + Math.floor((index * count) / LOOKUPS)));
}

function username(n: number): string {
  return `E${String(n).padStart(6, '0')}`;
}
