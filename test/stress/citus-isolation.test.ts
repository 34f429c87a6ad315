import { readFileSync } from 'node:fs';
import test, { type ExecutionContext } from 'ava';
import { NO_TENANT } from '../../lib/db/tenant-database.ts';
import { type CitusCluster, distributedDatabase, startCitusCluster } from '../helpers/citus.ts';
import type { TenantDatabaseRoute } from '../helpers/database.ts';
import { OPERATIONS_PER_CASE } from '../helpers/isolation.ts';
import { auditLane, documentLane, inLanes, type LaneOptions, spaceLane } from '../helpers/isolation-lanes.ts';
import { pgbouncerBinary, startPgBouncer } from '../helpers/pgbouncer.ts';
import { dropApplicationTenantConditionForTest } from '../helpers/row-level-security-alone.ts';
import { addReport, emptyReport, probeScopes, sharedBackends } from '../helpers/scope-probes.ts';

/**
 * Both walls of tenant isolation, and row-level security alone, through Citus (SPEC §15.4): the
 * properties of test/stress/isolation.test.ts with every world a database of its own on a
 * coordinator and two workers, laid out as `make distribute` lays it out (`tenants` a
 * reference table, every tenant table distributed by `tenant`, co-located), and the service's
 * view in the Citus form of the scope. With both walls up, a statement of the service on more
 * than one shard fails (`citus.multi_task_query_log_level = 'error'`), and the coordinator's
 * log is read for any: a refusal in both worlds would compare equal. Row-level security alone
 * (the application's tenant condition left out) runs in worlds of one shard, so that both
 * tenants' rows sit in one shard table on a worker, the policies there the only wall (over 32
 * shards such statements would read every shard, and Citus refuses a `FOR UPDATE` over several).
 * The last test runs them through PgBouncer in front of the coordinator, with the scope probes
 * of test/stress/pooler-isolation.test.ts beside them. Without Citus's tarball (outside CI)
 * the tests are skipped.
 */
const DOCUMENT_CASES = 800;
const SPACE_CASES = 200;
const RLS_ALONE_DOCUMENT_CASES = 400;
const POOLED_DOCUMENT_CASES = 200;
const POOLED_SPACE_CASES = 100;
/** PgBouncer's server connections per database (the service's pool: 10). */
const SERVER_POOL = 2;
/** A fixed amount of work, which a loaded machine does slower: a limit to catch a hang. */
const LIMIT_MS = 30 * 60_000;

// Decided before any test is declared: ava takes declarations only until the file first waits.
const cluster = await startCitusCluster('spaceport_citus_isolation').catch((error: Error) => ({ missing: error.message }));
if ('missing' in cluster && !process.env.CI) process.stderr.write(`${cluster.missing}: the Citus isolation tests are skipped\n`);
const citusTest = 'missing' in cluster && !process.env.CI ? test.serial.skip : test.serial;
const pgbouncer = await pgbouncerBinary();
const pooledTest = 'path' in pgbouncer || process.env.CI ? citusTest : test.serial.skip;

test.after.always(async () => {
  if (!('missing' in cluster)) await cluster.stop();
});

function started(): CitusCluster {
  if ('missing' in cluster) throw new Error(cluster.missing);
  return cluster;
}

/** Lanes whose every world is a distributed database of the cluster, of `shardCount` shards (Citus's default unless given). */
function throughCitus(shardCount?: number): LaneOptions {
  const route: TenantDatabaseRoute = { create: (tenants) => distributedDatabase(started(), tenants, { shardCount }) };
  return { route };
}

/** The statements the coordinator refused for touching more than one shard, from its log: each error with its context and statement. */
function multiShardRefusals(): string[] {
  const entries = readFileSync(started().coordinatorLog, 'utf8').split(/\n(?=\d{4}-\d\d-\d\d )/);
  return entries.flatMap((entry, index) => {
    if (!entry.includes('ERROR:  multi-task query about to be executed')) return [];
    const rest = entries.slice(index + 1, index + 4);
    return [[entry, ...rest.slice(0, rest.findIndex((line) => line.includes('STATEMENT:')) + 1)].join('\n')];
  });
}

/** Runs `lanes` with both walls up; none of their statements may have touched two shards. */
async function oneShardEach(t: ExecutionContext, lanes: () => Promise<void>): Promise<void> {
  const before = multiShardRefusals().length;
  const begun = performance.now();
  await lanes();
  const refused = multiShardRefusals().slice(before);
  t.log(`${Math.round(performance.now() - begun)} ms; ${refused.length} statements refused for touching more than one shard`);
  t.deepEqual(refused.slice(0, 5), []);
}

citusTest('a world of one shard holds both tenants\' rows side by side on a worker, where without the application\'s condition the policies alone keep them apart', async (t) => {
  const world = await distributedDatabase(started(), ['alpha', 'beta'], { shardCount: 1 });
  t.teardown(() => world.close());
  const { rows: shards } = await world.knex.raw<{ rows: Array<{ shards: string }> }>("select count(*) as shards from pg_dist_shard where logicalrelid = 'documents'::regclass");
  t.is(Number(shards[0]?.shards), 1);
  await world.knex('documents').insert(['alpha', 'beta'].map((tenant) => ({ tenant, collection: 'notes', id: 'n1', doc: { _id: 'n1', owner: tenant } })));
  const restore = dropApplicationTenantConditionForTest();
  try {
    const { rows } = await world.tenantDatabase.query<{ owner: string }>('alpha', { sql: 'select doc->>\'owner\' as owner from documents where "tenant" = $1', bindings: ['alpha'] });
    t.deepEqual(rows, [{ owner: 'alpha' }]);
  } finally {
    restore();
  }
  t.is((await world.knex('documents').count({ n: '*' }))[0]?.n, '2', 'both rows are there for the owner');
});

citusTest(`through Citus, documents, both walls: ${DOCUMENT_CASES} generated filters × ${OPERATIONS_PER_CASE} operations, no leak, each statement on one shard`, async (t) => {
  t.timeout(LIMIT_MS);
  await oneShardEach(t, () => inLanes(DOCUMENT_CASES, (runs) => documentLane(runs, throughCitus())));
});

citusTest(`through Citus, spaces and audit, both walls: ${SPACE_CASES} generated sequences each, concurrent across tenants, no leak, each statement on one shard`, async (t) => {
  t.timeout(LIMIT_MS);
  await oneShardEach(t, async () => {
    await inLanes(SPACE_CASES, (runs) => spaceLane(runs, throughCitus()));
    await inLanes(SPACE_CASES, (runs) => auditLane(runs, throughCitus()));
  });
});

citusTest(`through Citus, row-level security alone (both tenants' rows in one shard, on a worker): ${RLS_ALONE_DOCUMENT_CASES} filters, ${SPACE_CASES} space sequences and ${SPACE_CASES} audit sequences, no leak`, async (t) => {
  t.timeout(LIMIT_MS);
  const restore = dropApplicationTenantConditionForTest();
  try {
    await oneShardEach(t, async () => {
      await inLanes(RLS_ALONE_DOCUMENT_CASES, (runs) => documentLane(runs, throughCitus(1)));
      await inLanes(SPACE_CASES, (runs) => spaceLane(runs, throughCitus(1)));
      await inLanes(SPACE_CASES, (runs) => auditLane(runs, throughCitus(1)));
    });
  } finally {
    restore();
  }
});

pooledTest(`through PgBouncer (transaction mode) in front of the coordinator, each world of one shard: ${POOLED_DOCUMENT_CASES} document cases and ${POOLED_SPACE_CASES} space sequences with both walls, ${POOLED_DOCUMENT_CASES} document cases with row-level security alone, probes of every scope beside them, no leak`, async (t) => {
  t.timeout(LIMIT_MS);
  if (!('path' in pgbouncer)) throw new Error(pgbouncer.missing);
  const pooler = await startPgBouncer({ binary: pgbouncer.path, serverUrl: started().url, poolSize: SERVER_POOL });
  t.teardown(() => pooler.stop());
  const report = emptyReport();
  const pooled = (): LaneOptions => ({
    route: { create: (tenants) => distributedDatabase(started(), tenants, { shardCount: 1, serviceUrl: (url) => pooler.pooled(url), poolMax: 10 }) },
    alongside: (shared) => {
      const stop = probeScopes(shared.tenantDatabase, ['alpha', 'beta', NO_TENANT]);
      return async () => addReport(report, await stop());
    },
  });
  await oneShardEach(t, async () => {
    await inLanes(POOLED_DOCUMENT_CASES, (runs) => documentLane(runs, pooled()));
    await inLanes(POOLED_SPACE_CASES, (runs) => spaceLane(runs, pooled()));
    const restore = dropApplicationTenantConditionForTest();
    try {
      await inLanes(POOLED_DOCUMENT_CASES, (runs) => documentLane(runs, pooled()));
    } finally {
      restore();
    }
  });
  t.log(`${report.statements} probes beside them, on ${report.backends.size} server connections, ${sharedBackends(report)} of which ran statements of several tenants; ${report.problems.length} problems`);
  t.deepEqual([...new Set(report.problems)].slice(0, 10), []);
  t.true(sharedBackends(report) > 0, 'statements of different tenants took turns on the same server connections');
});
