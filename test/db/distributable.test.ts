import test from 'ava';
import { documentStore, DuplicateKeyError } from '../../lib/documents/index.ts';
import { insertBatches, insertStatement } from '../../lib/documents/statements.ts';
import { migratedDatabase, type MigratedDatabase, testTenantDatabase } from '../helpers/database.ts';

/**
 * What Citus needs of the schema and the statements (SPEC §15.4), checked on plain PostgreSQL;
 * test/stress/citus.test.ts proves them on Citus itself.
 */
let database: MigratedDatabase;

test.before(async () => {
  database = await migratedDatabase(['acme', 'other']);
});
test.after.always(async () => {
  await database?.close();
});

test('the update an UPDATE applies to a row is IMMUTABLE: Citus refuses STABLE functions over column values in an UPDATE', async (t) => {
  const { rows } = await database.knex.raw<{ rows: Array<{ volatility: string }> }>("select provolatile as volatility from pg_proc where proname = 'documents_updated'");
  t.deepEqual(rows, [{ volatility: 'i' }]);
});

test('documents are inserted with INSERT … VALUES, never INSERT … SELECT (which Citus turns into a COPY that row-level security refuses)', (t) => {
  const [batch] = insertBatches([{ _id: 'a' }, { _id: 'b' }]);
  const statement = insertStatement('acme', 'notes', batch ?? []);
  t.is(statement.sql, 'insert into "documents" ("tenant", "collection", "id", "doc") values ($1, $2, $3, $4::jsonb), ($1, $2, $5, $6::jsonb)');
  t.deepEqual(statement.bindings, ['acme', 'notes', 'a', '{"_id":"a"}', 'b', '{"_id":"b"}']);
});

test('the Citus form of the scope (SET LOCAL in a transaction block) gives the same answers on plain PostgreSQL, after a failed statement too', async (t) => {
  const citusForm = testTenantDatabase(database.url, { scopeForm: 'citus', poolMax: 1, queryTimeoutMs: 5000 });
  t.teardown(() => citusForm.close());
  const notes = documentStore(citusForm, 'acme').collection('citus-form');
  await notes.insertMany([{ _id: 'a', n: 1 }, { _id: 'b', n: 2 }]);
  await t.throwsAsync(notes.insertOne({ _id: 'a' }), { instanceOf: DuplicateKeyError });
  t.deepEqual(await notes.find({ n: { $gte: 2 } }).toArray(), [{ _id: 'b', n: 2 }], 'the one connection is usable after the failure');
  t.is((await notes.updateOne({ _id: 'a' }, { $inc: { n: 10 } })).modifiedCount, 1);
  t.is(await documentStore(citusForm, 'other').collection('citus-form').countDocuments({}), 0, 'the other tenant sees none');
  const inside = await citusForm.transaction('acme', async (run) => {
    await run({ sql: "insert into documents (tenant, collection, id, doc) values ('acme', 'citus-form', 'c', '{\"_id\": \"c\"}')", bindings: [] });
    return (await run({ sql: "select current_setting('spaceport.tenant') as tenant, current_user as role, current_setting('statement_timeout') as limit", bindings: [] })).rows;
  });
  t.deepEqual(inside, [{ tenant: 'acme', role: 'spaceport_tenant', limit: '5s' }]);
  t.is(await notes.countDocuments({}), 3);
  const outside = await database.knex.raw<{ rows: Array<{ n: number }> }>("select doc->'n' as n from documents where tenant = 'acme' and collection = 'citus-form' and id = 'a'");
  t.deepEqual(outside.rows, [{ n: 11 }]);
});
