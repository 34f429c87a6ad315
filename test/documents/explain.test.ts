import test from 'ava';
import pg, { type QueryResult, type QueryResultRow } from 'pg';
import { findAccountByUsername } from '../../lib/auth/accounts.ts';
import { documentStore, type Collection } from '../../lib/documents/index.ts';
import type { Statement } from '../../lib/db/statement.ts';
import { NO_TENANT, TENANT_ROLE, TENANT_SETTING, TenantDatabase } from '../../lib/db/tenant-database.ts';
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
  t.regex(plan, /Index Scan (using|on) documents_username_per_tenant/);
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
  t.regex(usernames, /documents_username_per_tenant/);
  const items = documentStore(database.tenantDatabase, 'acme').collection('items');
  t.is((await items.find({ sku: { $in: ['sku-7', 'sku-77', 'sku-777'] } }).toArray()).length, 3);
});

test.serial('the tenant condition holds in the indexed lookups', async (t) => {
  const accounts = documentStore(database.tenantDatabase, 'other').collection('accounts');
  t.like(await accounts.findOne({ username: 'user-1' }), { _id: 'id-1' });
  t.is(await documentStore(database.tenantDatabase, 'acme').collection('items').countDocuments({ username: 'user-1' }), 1);
  t.is(await documentStore(database.tenantDatabase, 'other').collection('items').countDocuments({ username: 'user-1' }), 0);
});

/** The plan PostgreSQL makes for `statement` before knowing its values, as a kept plan is made: under the tenant's role and row-level security. */
async function genericPlanOf(tenant: string, statement: Statement): Promise<string> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query('begin');
    await client.query(`select set_config('role', $1, true), set_config($2, $3, true), set_config('plan_cache_mode', 'force_generic_plan', true)`, [TENANT_ROLE, TENANT_SETTING, tenant]);
    await client.query(`prepare kept as ${statement.sql}`);
    const placeholders = statement.bindings.map((value) => pg.escapeLiteral(String(value))).join(', ');
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain (costs off) execute kept(${placeholders})`);
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  } finally {
    await client.query('rollback').catch(() => undefined);
    await client.end();
  }
}

test.serial('a find by a unique key (_id, username) is planned once per connection, by its index; a find by another field is planned for its values each time', async (t) => {
  const oneConnection = new RecordingDatabase(database.url, { poolMax: 1 });
  try {
    const store = documentStore(oneConnection, 'acme');
    for (const n of [1, 2, 3]) {
      t.like(await store.collection('accounts').findOne({ username: `user-${n}` }), { _id: `id-${n}` });
      t.like(await store.collection('items').findOne({ _id: `id-${n}` }), { sku: `sku-${n}` });
      t.is((await store.collection('items').find({ sku: `sku-${n}` }).toArray()).length, 1);
      t.is((await findAccountByUsername(oneConnection, 'acme', `user-${n}`))?.uid, `id-${n}`);
    }
    const { rows } = await oneConnection.query<{ statement: string; generic_plans: string; custom_plans: string }>(NO_TENANT, {
      sql: "select statement, generic_plans, custom_plans from pg_prepared_statements where statement like '%from \"documents\"%'",
      bindings: [],
    });
    const plans = (fragment: string, ordered = true) => {
      const row = rows.find((each) => each.statement.includes(fragment) && each.statement.includes('order by') === ordered);
      return row && { generic: Number(row.generic_plans), custom: Number(row.custom_plans) };
    };
    t.deepEqual(plans('account_username = $'), { generic: 3, custom: 0 }, 'by username: the plan made for the first lookup serves the next two');
    t.deepEqual(plans('id = $'), { generic: 3, custom: 0 }, 'by _id: the same');
    t.deepEqual(plans('doc @? $'), { generic: 0, custom: 3 }, 'by another field: planned each time for its values');
    t.deepEqual(plans('account_username = $', false), { generic: 3, custom: 0 }, "the login's own lookup by username: the same");
  } finally {
    await oneConnection.close();
  }
  const byUsername = await genericPlanOf('acme', await recorded('accounts', (found) => found.findOne({ username: 'user-54321' })));
  t.log(byUsername);
  t.regex(byUsername, /Index Scan using documents_username_per_tenant/);
  const byId = await genericPlanOf('acme', await recorded('items', (found) => found.findOne({ _id: 'id-99' })));
  t.log(byId);
  t.regex(byId, /Index Scan using documents_pkey/);
});

async function recorded(collection: string, operation: (found: Collection) => Promise<unknown>): Promise<Statement> {
  const recording = new RecordingDatabase(database.url);
  try {
    await operation(documentStore(recording, 'acme').collection(collection));
    if (recording.recorded === undefined) throw new Error('no statement ran');
    return recording.recorded;
  } finally {
    await recording.close();
  }
}
