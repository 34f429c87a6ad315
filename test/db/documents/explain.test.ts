import test from 'ava';
import type { Knex } from 'knex';
import { documentStore } from '../../../lib/db/documents/index.ts';
import { migratedDatabase, type MigratedDatabase } from '../../helpers/database.ts';

let database: MigratedDatabase;
const SIZE = 100_000;

test.before(async () => {
  database = await migratedDatabase(['acme', 'other']);
  // Rows made in SQL keep this fast; the store reads them like any others.
  for (const [tenant, collection] of [['acme', 'accounts'], ['acme', 'items'], ['other', 'accounts']]) {
    await database.knex.raw(
      `insert into documents (tenant, collection, id, doc)
       select ?, ?, 'id-' || n, jsonb_build_object('_id', 'id-' || n, 'username', 'user-' || n, 'sku', 'sku-' || n, 'bucket', n % 100)
       from generate_series(1, ?) as n`,
      [tenant, collection, SIZE],
    );
  }
  await database.knex.raw('vacuum analyze documents');
});
test.after.always(async () => {
  await database?.close();
});

/** The plan PostgreSQL picks for the statement an operation sends. */
async function planOf(knex: Knex, operation: () => Promise<unknown>): Promise<string> {
  let statement: { sql: string; bindings: readonly unknown[] } | undefined;
  const capture = (query: { sql: string; bindings: readonly unknown[] }) => {
    statement ??= query;
  };
  knex.on('query', capture);
  await operation();
  knex.off('query', capture);
  if (statement === undefined) throw new Error('no statement ran');
  // The event shows PostgreSQL's `$n` placeholders (in order); knex.raw wants `?` and `\\?` for a literal one.
  const sql = statement.sql.replaceAll('?', '\\?').replace(/\$\d+/g, '?');
  const result = await knex.raw(`explain (analyze, costs off) ${sql}`, statement.bindings as Knex.RawBinding[]);
  return (result.rows as Array<{ 'QUERY PLAN': string }>).map((row) => row['QUERY PLAN']).join('\n');
}

test.serial('an account lookup by username uses the unique (tenant, username) index', async (t) => {
  const accounts = documentStore(database.knex, 'acme').collection('accounts');
  const plan = await planOf(database.knex, () => accounts.findOne({ username: 'user-54321' }));
  t.log(plan);
  t.regex(plan, /Index Scan (using|on) documents_accounts_username/);
  t.notRegex(plan, /Seq Scan/);
  t.like(await accounts.findOne({ username: 'user-54321' }), { _id: 'id-54321' });
});

test.serial('an equality lookup on any field uses the GIN index', async (t) => {
  const items = documentStore(database.knex, 'acme').collection('items');
  const plan = await planOf(database.knex, () => items.find({ sku: 'sku-777' }).toArray());
  t.log(plan);
  t.regex(plan, /Bitmap Index Scan on documents_doc_gin/);
  t.notRegex(plan, /Seq Scan/);
  t.is((await items.find({ sku: 'sku-777' }).toArray()).length, 1);
});

test.serial('an _id lookup uses the primary key', async (t) => {
  const items = documentStore(database.knex, 'acme').collection('items');
  const plan = await planOf(database.knex, () => items.findOne({ _id: 'id-99' }));
  t.log(plan);
  t.regex(plan, /Index Scan using documents_pkey/);
  t.notRegex(plan, /Seq Scan/);
});

test.serial('the tenant condition holds in the indexed lookups', async (t) => {
  const accounts = documentStore(database.knex, 'other').collection('accounts');
  t.like(await accounts.findOne({ username: 'user-1' }), { _id: 'id-1' });
  t.is(await documentStore(database.knex, 'acme').collection('items').countDocuments({ username: 'user-1' }), 1);
  t.is(await documentStore(database.knex, 'other').collection('items').countDocuments({ username: 'user-1' }), 0);
});
