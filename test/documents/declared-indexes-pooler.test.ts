import test from 'ava';
import { documentStore } from '../../lib/documents/index.ts';
import { DeclaredIndexPaths } from '../../lib/documents/declared-index-paths.ts';
import { useDeclaredIndexes } from '../../lib/documents/declared-paths.ts';
import { buildDeclaredIndexes } from '../../lib/documents/index-build.ts';
import { declaredPath, indexNames, type IndexDeclaration } from '../../lib/documents/index-keys.ts';
import { TenantDatabase } from '../../lib/db/tenant-database.ts';
import { migratedDatabase, serverUrl, type MigratedDatabase } from '../helpers/database.ts';
import { pgbouncerBinary, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';

/** The declared paths, as a service's runtime holds them once its projects are mounted. */
const declared = new DeclaredIndexPaths();

/**
 * Through a transaction-mode PgBouncer (SPEC §15.2) declared indexes serve the same finds: each
 * statement carries its own role and tenant, so PostgreSQL plans it under row-level security
 * whichever server connection it lands on.
 */
const pgbouncer = await pgbouncerBinary();
if ('missing' in pgbouncer && !process.env.CI) process.stderr.write(`${pgbouncer.missing}: the pooler plan tests are skipped\n`);
const poolerTest = 'path' in pgbouncer || process.env.CI ? test.serial : test.serial.skip;

const declarations: IndexDeclaration[] = [{ project: 'shop', collection: 'items', fields: [{ path: declaredPath('score'), direction: 1 }], unique: false }];
const { query: index } = indexNames(declarations[0] as IndexDeclaration);

let pooler: PgBouncer | undefined;
let database: MigratedDatabase | undefined;

test.before(async () => {
  if (!('path' in pgbouncer)) return;
  pooler = await startPgBouncer({ binary: pgbouncer.path, serverUrl: serverUrl(), poolSize: 2 });
  const through = pooler;
  database = await migratedDatabase(['acme'], { url: (databaseUrl) => through.pooled(databaseUrl), poolMax: 4 });
  await database.knex.raw(
    `insert into documents (tenant, collection, id, doc)
     select 'acme', 'items', 'id-' || n, jsonb_build_object('_id', 'id-' || n, 'score', n) from generate_series(1, 50000) as n`,
  );
  // Built over a session connection, as the service builds it (DATABASE_DIRECT_URL).
  await buildDeclaredIndexes(database.url, declarations, { info: () => {}, warn: () => {}, error: () => {} }).done;
  await database.knex.raw('vacuum analyze documents');
  useDeclaredIndexes(declared, declarations);
});
test.after.always(async () => {
  await database?.close();
  await pooler?.stop();
});

/** The plan of `sql` run through the pooler as the service runs it: restricted role, row-level security, the tenant per transaction. */
async function planThroughPooler(pooled: TenantDatabase, statement: { sql: string; bindings: readonly unknown[] }): Promise<string> {
  const { rows } = await pooled.query<{ 'QUERY PLAN': string }>('acme', { sql: `explain (costs off) ${statement.sql}`, bindings: statement.bindings });
  return rows.map((row) => row['QUERY PLAN']).join('\n');
}

class RecordingDatabase extends TenantDatabase {
  readonly recorded: Array<{ sql: string; bindings: readonly unknown[] }> = [];

  override query<Row extends import('pg').QueryResultRow>(tenant: string, statement: { sql: string; bindings: readonly unknown[] }) {
    this.recorded.push(statement);
    return super.query<Row>(tenant, statement);
  }
}

poolerTest('equality, range and sort on a declared path use its index through a transaction-mode pooler', async (t) => {
  const through = pooler as PgBouncer;
  const recording = new RecordingDatabase(through.pooled((database as MigratedDatabase).url), { poolMax: 4 });
  try {
    const items = documentStore(recording, 'acme', declared).collection('items');
    t.deepEqual((await items.find({ score: 777 }).toArray()).map(({ _id }) => _id), ['id-777']);
    t.deepEqual((await items.find({ score: { $gt: 49_997 } }).sort({ score: -1 }).toArray()).map(({ score }) => score), [50_000, 49_999, 49_998]);
    t.deepEqual((await items.find().sort({ score: 1 }).limit(2).toArray()).map(({ score }) => score), [1, 2]);
    const statements = [...recording.recorded];
    t.is(statements.length, 3);
    for (const statement of statements) {
      const plan = await planThroughPooler(recording, statement);
      t.log(plan);
      t.regex(plan, new RegExp(index));
      t.notRegex(plan, /Seq Scan/);
    }
  } finally {
    await recording.close();
  }
});
