import test from 'ava';
import pg from 'pg';
import { documentStore } from '../../lib/documents/index.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

/**
 * Failing on 57eb77f (found by probing the array-paths change): what `document_array_paths`
 * costs writes and other tenants' finds at the edges.
 */

let database: MigratedDatabase;

test.before(async () => {
  database = await migratedDatabase(['acme', 'other']);
});
test.after.always(async () => {
  await database?.close();
});

/** Text that does not compress: a key PostgreSQL must store at its full size. */
function incompressibleKey(characters: number): string {
  return Array.from({ length: characters }, (_, index) => String.fromCharCode(0x4e00 + ((index * 7919) % 5000))).join('');
}

test.serial('a document that holds an array under a long key path is stored, as it is without the array', async (t) => {
  const items = documentStore(database.tenantDatabase, 'acme').collection('long-keys');
  const key = incompressibleKey(1000);
  await items.insertOne({ _id: 'scalar', byUrl: { [key]: 1 } });
  // Fails today: "index row size 3xxx exceeds btree version 4 maximum 2704 for index document_array_paths_pkey".
  await t.notThrowsAsync(items.insertOne({ _id: 'array', byUrl: { [key]: [1] } }));
  await t.notThrowsAsync(items.updateOne({ _id: 'scalar' }, { $push: { [`byUrl.${key}x`]: 1 } }));
});

/** The plans `documents_no_arrays_at` runs for tenant `tenant`, as the service runs it (restricted role, row-level security). */
async function plansOfTheCheck(tenant: string, collection: string): Promise<string> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const notices: string[] = [];
  client.on('notice', (notice) => notices.push(notice.message ?? ''));
  try {
    await client.query("load 'auto_explain'");
    await client.query('set auto_explain.log_min_duration = 0; set auto_explain.log_nested_statements = on; set auto_explain.log_level = notice');
    await client.query('begin');
    await client.query("select set_config('role', 'spaceport_tenant', true), set_config('spaceport.tenant', $1, true)", [tenant]);
    await client.query("select documents_no_arrays_at($1, $2, array['score'])", [tenant, collection]);
    return notices.join('\n');
  } finally {
    await client.end();
  }
}

test.serial("another tenant's recorded paths do not make a tenant's check read them", async (t) => {
  // What one document of 20 000 arrays under distinct keys records, fifteen times (a few seconds of writes).
  await database.knex.raw("insert into document_array_paths (tenant, collection, path) select 'other', 'tickets', 'k' || n from generate_series(1, 300000) n");
  await database.knex.raw("insert into document_array_paths (tenant, collection, path) select 'acme', 'archive', 'k' || n from generate_series(1, 300000) n");
  await database.knex.raw('analyze document_array_paths');
  const plans = await plansOfTheCheck('acme', 'tickets');
  t.true(plans.includes('on document_array_paths'), plans);
  // Fails today: a (parallel) sequential scan of every tenant's rows, ~40-80 ms per find of acme's, which has none.
  t.false(/Seq Scan on document_array_paths/.test(plans), plans);
});
