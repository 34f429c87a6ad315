import { isDeepStrictEqual } from 'node:util';
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { TENANT_ROLE, TENANT_SETTING } from '../../lib/db/tenant-database.ts';
import { documentStore } from '../../lib/documents/index.ts';
import { migratedDatabase, serverUrl, testTenantDatabase, type MigratedDatabase } from '../helpers/database.ts';
import { preparingPgBouncerBinary, startPooler } from '../helpers/pgbouncer.ts';

/**
 * Through PgBouncer 1.21 and later with `max_prepared_statements`, the service's reads stay
 * prepared in transaction mode: the pooler prepares each text again on whichever server
 * connection a client's statement gets. Every answer must still be its own tenant's, with
 * statements of both tenants taking turns on the same two server connections.
 */
const SERVER_POOL = 2;
const CLIENT_POOL = 10;
const NOTES = 40;
const READS = 600;
/** What a read's scope lets it see, the store's tenant condition left out. */
const SCOPE_SEEN = `select current_user as role, current_setting('${TENANT_SETTING}', true) as tenant,
  (select string_agg(distinct doc->>'owner', ',') from documents) as owners, $1::int as n`;

// Decided before any test is declared: ava takes declarations only until the file first waits.
const pgbouncer = await preparingPgBouncerBinary();
if ('missing' in pgbouncer && !process.env.CI) process.stderr.write(`${pgbouncer.missing}: the prepared-statement pooler tests are skipped\n`);
const poolerTest = 'path' in pgbouncer || process.env.CI ? test.serial : test.serial.skip;

let database: MigratedDatabase;
test.before(async () => {
  database = await migratedDatabase(['alpha', 'beta']);
  for (const tenant of ['alpha', 'beta']) {
    const notes = Array.from({ length: NOTES }, (_, n) => ({ _id: `${tenant}-${n}`, owner: tenant, n, tags: [tenant] }));
    await documentStore(database.tenantDatabase, tenant).collection('notes').insertMany(notes);
  }
});
test.after.always(async () => {
  await database?.close();
});

function binary(): string {
  if ('missing' in pgbouncer) throw new Error(pgbouncer.missing);
  return pgbouncer.path;
}

/** PgBouncer 1.24 in transaction mode, keeping 200 prepared statements on each of its `SERVER_POOL` server connections. */
function startPreparingPooler(t: ExecutionContext): ReturnType<typeof startPooler> {
  return startPooler(t, { binary: binary(), serverUrl: serverUrl(), poolSize: SERVER_POOL, preparedStatements: 200 });
}

interface Outcome {
  /** Answers that were not exactly the asking tenant's own note. */
  readonly wrong: string[];
  /** How often the instance said its connections keep no prepared statement. */
  readonly givenUp: number;
  /** The prepared statements each server connection holds, as PgBouncer counts them. */
  readonly preparedPerServer: number[];
}

/** `READS` reads of both tenants at once, of three shapes, through a pooler keeping 200 prepared statements per server connection. */
async function readThroughPooler(t: ExecutionContext, preparing: boolean): Promise<Outcome> {
  const pooler = await startPreparingPooler(t);
  let givenUp = 0;
  const tenantDatabase = testTenantDatabase(pooler.pooled(database.url), {
    poolMax: CLIENT_POOL,
    preparedStatements: preparing,
    onUnprepared: () => {
      givenUp += 1;
    },
  });
  const wrong: string[] = [];
  try {
    await Promise.all(
      Array.from({ length: READS }, async (_, index) => {
        const tenant = index % 2 === 0 ? 'alpha' : 'beta';
        const n = (index * 7) % NOTES;
        const notes = documentStore(tenantDatabase, tenant).collection('notes');
        const shape = index % 3;
        const found = shape === 0 ? await notes.findOne({ n }) : shape === 1 ? await notes.findOne({ n: { $gte: n, $lt: n + 1 } }) : await notes.findOne({ n, tags: tenant });
        if (found?._id !== `${tenant}-${n}` || found.owner !== tenant) wrong.push(`${tenant} asked for ${n}, got ${JSON.stringify(found)}`);
        // The scope itself, which the store's own tenant condition would otherwise hide: role, tenant and every row it may see.
        const { rows } = await tenantDatabase.query<Record<string, unknown>>(tenant, { sql: SCOPE_SEEN, bindings: [n] });
        const seen = { role: TENANT_ROLE, tenant, owners: tenant, n };
        if (!isDeepStrictEqual(rows[0], seen)) wrong.push(`${tenant}'s statement ran as ${JSON.stringify(rows[0])}`);
      }),
    );
    return { wrong, givenUp, preparedPerServer: await preparedPerServer(pooler.pooled(serverUrl()), new URL(database.url).pathname.slice(1)) };
  } finally {
    await tenantDatabase.close();
  }
}

/** `SHOW SERVERS` on the pooler's console: its `prepared_statements` column, one figure per server connection to `database`. */
async function preparedPerServer(pooledUrl: string, databaseName: string): Promise<number[]> {
  const console = new URL(pooledUrl);
  console.pathname = '/pgbouncer';
  const client = new pg.Client({ connectionString: console.href });
  await client.connect();
  try {
    const { rows } = await client.query<{ database: string; prepared_statements: string }>('show servers');
    return rows.filter((row) => row.database === databaseName).map((row) => Number(row.prepared_statements));
  } finally {
    await client.end();
  }
}

poolerTest(`PgBouncer 1.24, max_prepared_statements = 200: ${READS} reads of two tenants stay prepared on ${SERVER_POOL} server connections, each answer its own tenant's`, async (t) => {
  const { wrong, givenUp, preparedPerServer } = await readThroughPooler(t, true);
  t.deepEqual(wrong.slice(0, 5), [], `${wrong.length} answers were not the asking tenant's own`);
  t.is(givenUp, 0, 'the instance never fell back to unnamed statements');
  t.is(preparedPerServer.length, SERVER_POOL);
  // The plain scope, the read scope and the three reads' texts: five per server connection that ran each.
  for (const count of preparedPerServer) t.true(count >= 2 && count <= 5, `${count} prepared statements on a server connection`);
});

poolerTest('PgBouncer 1.24, max_prepared_statements = 200: a read whose bound value a migration no longer fits (a column turned int to text) fails once, then answers', async (t) => {
  const pooler = await startPreparingPooler(t);
  const tenantDatabase = testTenantDatabase(pooler.pooled(database.url), { poolMax: 1 });
  t.teardown(() => tenantDatabase.close());
  await database.knex.raw('create table retyped_columns (a int, b int); insert into retyped_columns values (1, 2); grant select on retyped_columns to spaceport_tenant');
  const read = { sql: 'select b from retyped_columns where a = $1', bindings: [1] };
  t.deepEqual((await tenantDatabase.query('alpha', read)).rows, [{ b: 2 }]);
  await database.knex.raw('alter table retyped_columns alter column a type text');
  // As on a direct connection: the statement prepared before the migration fails once (text = integer).
  await t.throwsAsync(tenantDatabase.query('alpha', read), { message: /operator does not exist/ });
  for (let n = 0; n < 3; n += 1) t.deepEqual((await tenantDatabase.query('alpha', read)).rows, [{ b: 2 }]);
});

poolerTest('the same pooler with the instance preparing nothing (DATABASE_PREPARED_STATEMENTS=false): the same answers, nothing prepared', async (t) => {
  const { wrong, givenUp, preparedPerServer } = await readThroughPooler(t, false);
  t.deepEqual(wrong.slice(0, 5), [], `${wrong.length} answers were not the asking tenant's own`);
  t.is(givenUp, 0);
  t.deepEqual(preparedPerServer, [0, 0], 'what the count above counts is the instance\'s statements');
});

poolerTest('PgBouncer 1.24, max_prepared_statements = 200: a read whose columns a migration changed (select * after a column was added) answers with them on every server connection', async (t) => {
  const pooler = await startPreparingPooler(t);
  const tenantDatabase = testTenantDatabase(pooler.pooled(database.url), { poolMax: CLIENT_POOL });
  t.teardown(() => tenantDatabase.close());
  await database.knex.raw('create table migrated_columns (a int); insert into migrated_columns values (1); grant select on migrated_columns to spaceport_tenant');
  const read = { sql: 'select * from migrated_columns where a = $1', bindings: [1] };
  const readEverywhere = () => Promise.all(Array.from({ length: 40 }, () => tenantDatabase.query('alpha', read).then(({ rows }) => rows)));
  for (const rows of await readEverywhere()) t.deepEqual(rows, [{ a: 1 }]);
  await database.knex.raw('alter table migrated_columns add column b int default 2');
  for (const rows of await readEverywhere()) t.deepEqual(rows, [{ a: 1, b: 2 }]);
  for (const rows of await readEverywhere()) t.deepEqual(rows, [{ a: 1, b: 2 }]);
});
