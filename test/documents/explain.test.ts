import test from 'ava';
import type { QueryResult, QueryResultRow } from 'pg';
import { documentStore, type Collection } from '../../lib/documents/index.ts';
import type { Statement } from '../../lib/db/statement.ts';
import { TenantDatabase } from '../../lib/db/tenant-database.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

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

/** A tenant database that keeps the first statement it runs. */
class RecordingDatabase extends TenantDatabase {
  recorded: Statement | undefined;

  override query<Row extends QueryResultRow>(tenant: string, statement: Statement): Promise<QueryResult<Row>> {
    this.recorded ??= statement;
    return super.query<Row>(tenant, statement);
  }
}

/**
 * The plan PostgreSQL picks for the statement an operation sends, run as the service runs it:
 * under the restricted role and row-level security, for the same tenant.
 */
async function planOf(tenant: string, collection: string, operation: (found: Collection) => Promise<unknown>): Promise<string> {
  const recording = new RecordingDatabase(database.url);
  try {
    await operation(documentStore(recording, tenant).collection(collection));
    const statement = recording.recorded;
    if (statement === undefined) throw new Error('no statement ran');
    const { rows } = await recording.query<{ 'QUERY PLAN': string }>(tenant, { sql: `explain (analyze, costs off) ${statement.sql}`, bindings: statement.bindings });
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  } finally {
    await recording.close();
  }
}

test.serial('an account lookup by username uses the unique (tenant, username) index', async (t) => {
  const accounts = documentStore(database.tenantDatabase, 'acme').collection('accounts');
  const plan = await planOf('acme', 'accounts', (found) => found.findOne({ username: 'user-54321' }));
  t.log(plan);
  t.regex(plan, /Index Scan (using|on) documents_accounts_username/);
  t.notRegex(plan, /Seq Scan/);
  t.like(await accounts.findOne({ username: 'user-54321' }), { _id: 'id-54321' });
});

test.serial('an equality lookup on any field uses the GIN index', async (t) => {
  const items = documentStore(database.tenantDatabase, 'acme').collection('items');
  const plan = await planOf('acme', 'items', (found) => found.find({ sku: 'sku-777' }).toArray());
  t.log(plan);
  t.regex(plan, /Bitmap Index Scan on documents_doc_gin/);
  t.notRegex(plan, /Seq Scan/);
  t.is((await items.find({ sku: 'sku-777' }).toArray()).length, 1);
});

test.serial('an _id lookup uses the primary key', async (t) => {
  const plan = await planOf('acme', 'items', (found) => found.findOne({ _id: 'id-99' }));
  t.log(plan);
  t.regex(plan, /Index Scan using documents_pkey/);
  t.notRegex(plan, /Seq Scan/);
});

test.serial('$in lookups use the same indexes as equality: GIN for fields, the primary key for _id, the username index for accounts', async (t) => {
  const fields = await planOf('acme', 'items', (found) => found.find({ sku: { $in: ['sku-7', 'sku-77', 'sku-777'] } }).toArray());
  t.log(fields);
  t.regex(fields, /Bitmap Index Scan on documents_doc_gin/);
  t.notRegex(fields, /Seq Scan/);
  const ids = await planOf('acme', 'items', (found) => found.find({ _id: { $in: ['id-7', 'id-77'] } }).toArray());
  t.regex(ids, /Index Scan using documents_pkey|Bitmap Index Scan on documents_pkey/);
  const usernames = await planOf('acme', 'accounts', (found) => found.find({ username: { $in: ['user-7', 'user-77'] } }).toArray());
  t.regex(usernames, /documents_accounts_username/);
  const items = documentStore(database.tenantDatabase, 'acme').collection('items');
  t.is((await items.find({ sku: { $in: ['sku-7', 'sku-77', 'sku-777'] } }).toArray()).length, 3);
});

test.serial('the tenant condition holds in the indexed lookups', async (t) => {
  const accounts = documentStore(database.tenantDatabase, 'other').collection('accounts');
  t.like(await accounts.findOne({ username: 'user-1' }), { _id: 'id-1' });
  t.is(await documentStore(database.tenantDatabase, 'acme').collection('items').countDocuments({ username: 'user-1' }), 1);
  t.is(await documentStore(database.tenantDatabase, 'other').collection('items').countDocuments({ username: 'user-1' }), 0);
});
