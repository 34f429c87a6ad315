import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import type { Knex } from 'knex';
import pg from 'pg';
import { BATCH_PROGRESS_TABLE, inBatches } from '../../lib/db/batches.ts';
import { migrateLatest } from '../../lib/db/migrations.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { freshKnex } from '../helpers/database.ts';
import { migrationFolder } from '../helpers/migrations.ts';
import { boundUnderLoad } from '../helpers/machine-load.ts';

/**
 * Data migrations in batches (SPEC §18.2): each batch a short transaction that commits its work
 * with its position, so a pass over a large table never holds its writes for long and carries
 * on where it stopped after a crash. The array-paths migration walks the documents that way.
 */

/** Documents holding arrays cost the walk some 0.2 ms each, documents without a few µs. */
const WITH_ARRAYS = 30_000;
const WITHOUT_ARRAYS = 30_000;

test('a batched job stopped by a failure carries on after its last committed batch: every row done exactly once', async (t) => {
  const knex = await freshKnex(t);
  await knex.raw('create table walk_items (id int primary key, visits int not null default 0)');
  await knex.raw('insert into walk_items (id) select generate_series(1, 2000)');
  let batches = 0;
  let failOnBatch: number | undefined = 3;
  const job = {
    name: 'visit walk_items',
    batch: async (trx: Knex.Transaction, after: number | undefined, size: number) => {
      batches++;
      const { rows } = await trx.raw<{ rows: Array<{ id: number }> }>(
        'update walk_items set visits = visits + 1 where id in (select id from walk_items where id > ? order by id limit ?) returning id',
        [after ?? 0, size],
      );
      if (batches === failOnBatch) throw new Error('crash in the middle of a batch');
      return rows.length === 0 ? undefined : Math.max(...rows.map((row) => row.id));
    },
  };
  await t.throwsAsync(inBatches(knex, job, { firstSize: 100, minSize: 100, maxSize: 100 }), { message: 'crash in the middle of a batch' });
  t.deepEqual(await knex(BATCH_PROGRESS_TABLE).pluck('position'), [200], 'two batches of 100 committed their position');
  failOnBatch = undefined;
  await inBatches(knex, job, { firstSize: 100, minSize: 100, maxSize: 100 });
  const visits = await knex('walk_items').select('visits').count('* as rows').groupBy('visits');
  t.deepEqual(visits, [{ visits: 1, rows: '2000' }]);
  t.deepEqual(await knex(BATCH_PROGRESS_TABLE).select(), [], 'a finished job leaves no position');
});

/** Inserts documents one at a time until stopped; resolves with the longest insert, in ms. */
function writes(url: string): { stop(): Promise<number> } {
  let running = true;
  const done = (async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    let longest = 0;
    for (let sequence = 0; running; sequence++) {
      const started = performance.now();
      await client.query("insert into documents (tenant, collection, id, doc) values ('alpha', 'fresh', $1, $2)", [`f${sequence}`, { _id: `f${sequence}`, during: [sequence] }]);
      longest = Math.max(longest, performance.now() - started);
      await sleep(5);
    }
    await client.end();
    return longest;
  })();
  return {
    stop: async () => {
      running = false;
      return done;
    },
  };
}

async function seedDocuments(knex: Knex): Promise<void> {
  const many = (tenant: string, collection: string, count: number, doc: string) =>
    knex.raw(`insert into documents (tenant, collection, id, doc) select ?, ?, 'd' || g, ${doc} from generate_series(1, ?) g`, [tenant, collection, count]);
  await many('alpha', 'items', WITH_ARRAYS, "jsonb_build_object('_id', 'd' || g, 'tags', jsonb_build_array(g), 'owner', jsonb_build_object('names', jsonb_build_array('x')))");
  await many('beta', 'things', WITHOUT_ARRAYS, "jsonb_build_object('_id', 'd' || g, 'other', case when g % 1000 = 0 then jsonb_build_object('list', jsonb_build_array(g)) else jsonb_build_object('n', g) end)");
}

test('the array-paths migration records the paths of existing documents in batches, while writes to documents go on without waiting for the walk', async (t) => {
  const knex = await freshKnex(t);
  await migrateLatest(knex, { directory: migrationFolder(t, { before: '20261126000011' }) });
  for (const tenant of ['alpha', 'beta']) await createTenant(knex, tenant);
  await seedDocuments(knex);

  const url = knex.client.config.connection.connectionString as string;
  const load = writes(url);
  await sleep(200);
  const started = performance.now();
  await migrateLatest(knex, { directory: migrationFolder(t) });
  const walkMs = performance.now() - started;
  await sleep(200);
  const longest = await load.stop();
  t.log(`walked ${WITH_ARRAYS + WITHOUT_ARRAYS} documents in ${Math.round(walkMs)} ms; the longest insert meanwhile took ${Math.round(longest)} ms`);

  const recorded = await knex('document_array_paths').select('tenant', 'collection', 'path').orderBy(['tenant', 'collection', 'path']);
  t.deepEqual(recorded, [
    { tenant: 'alpha', collection: 'fresh', path: 'during' },
    { tenant: 'alpha', collection: 'items', path: 'owner.names' },
    { tenant: 'alpha', collection: 'items', path: 'tags' },
    { tenant: 'beta', collection: 'things', path: 'other.list' },
  ]);
  t.true(longest < boundUnderLoad(1000), `an insert waited ${Math.round(longest)} ms for the walk`);
  t.deepEqual(await knex(BATCH_PROGRESS_TABLE).select(), []);
});
