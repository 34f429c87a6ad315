import test from 'ava';
import { insertBatches, insertStatement } from '../../lib/documents/statements.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

/**
 * What Citus needs of the schema and the statements (SPEC §15.4), checked on plain PostgreSQL;
 * test/stress/citus.test.ts proves them on Citus itself.
 */
let database: MigratedDatabase;

test.before(async () => {
  database = await migratedDatabase(['acme']);
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
