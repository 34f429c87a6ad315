import { isDeepStrictEqual } from 'node:util';
import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import { NO_TENANT, TENANT_ROLE, TENANT_SETTING, TenantDatabase } from '../../lib/db/tenant-database.ts';
import { dropApplicationTenantConditionForTest } from '../helpers/row-level-security-alone.ts';
import { migratedDatabase, serverUrl, type MigratedDatabase, type TenantDatabaseRoute } from '../helpers/database.ts';
import { OPERATIONS_PER_CASE } from '../helpers/isolation.ts';
import { auditLane, documentLane, inLanes, spaceLane, type LaneOptions } from '../helpers/isolation-lanes.ts';
import type { Binary } from '../helpers/daemons.ts';
import { pgbouncerBinary, preparingPgBouncerBinary, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';
import { addReport, emptyReport, leftoverScopes, probeScopes, sharedBackends, type ProbeReport } from '../helpers/scope-probes.ts';

/**
 * Both walls of tenant isolation, and row-level security alone, through a transaction-mode
 * pooler (SPEC §15.2): the properties of test/stress/isolation.test.ts with the service's view
 * of every database going through PgBouncer, whose server pool (2 per database) is smaller than
 * the client pool (10). Beside each property, probes for both tenants and for no tenant run on
 * the same database, so statements of different tenants take turns on the same server
 * connections; each probe checks that it ran under its own role and tenant and saw no other
 * tenant's row. All of it twice: through Debian 12's PgBouncer 1.18, which keeps no prepared
 * statement (the instance falls back to unnamed ones), and through PgBouncer 1.24 keeping the
 * instance's prepared statements for it (`max_prepared_statements`), where statements of every
 * tenant share the pooler's prepared statements on each server connection.
 */
const SERVER_POOL = 2;
const CLIENT_POOL = 10;
const DOCUMENT_CASES = 600;
const SPACE_CASES = 200;
const RLS_ALONE_DOCUMENT_CASES = 400;
const SCOPE_RUNS = 100;
/** PostgreSQL's time limit the scoped statements carry (the service's is 1.5 s). */
const STATEMENT_TIMEOUT_MS = 1500;

interface PoolerUnderTest {
  readonly name: string;
  readonly binary: Binary;
  readonly preparedStatements?: number;
  running?: PgBouncer;
}

// Decided before any test is declared: ava takes declarations only until the file first waits.
const [debian, preparing] = await Promise.all([pgbouncerBinary(), preparingPgBouncerBinary()]);
const POOLERS: PoolerUnderTest[] = [
  { name: 'PgBouncer 1.18', binary: debian },
  { name: 'PgBouncer 1.24 keeping prepared statements', binary: preparing, preparedStatements: 200 },
];
for (const { name, binary } of POOLERS) {
  if ('missing' in binary && !process.env.CI) process.stderr.write(`${binary.missing}: the isolation tests through ${name} are skipped\n`);
}
const poolerTest = (pooler: PoolerUnderTest) => ('path' in pooler.binary || process.env.CI ? test.serial : test.serial.skip);

test.before(async () => {
  for (const pooler of POOLERS) {
    if ('path' in pooler.binary) pooler.running = await startPgBouncer({ binary: pooler.binary.path, serverUrl: serverUrl(), poolSize: SERVER_POOL, preparedStatements: pooler.preparedStatements });
  }
});
test.after.always(async () => {
  for (const pooler of POOLERS) await pooler.running?.stop();
});

function started(pooler: PoolerUnderTest): PgBouncer {
  if (pooler.running === undefined) throw new Error('missing' in pooler.binary ? pooler.binary.missing : `${pooler.name} did not start`);
  return pooler.running;
}

/** Lanes through `pooler`, each with probes beside it; the probes' findings go to `report`. */
function throughPooler(pooler: PoolerUnderTest, report: ProbeReport): LaneOptions {
  const route: TenantDatabaseRoute = {
    url: (databaseUrl) => started(pooler).pooled(databaseUrl),
    poolMax: CLIENT_POOL,
    // Through a pooler keeping them, the statements must stay prepared, or this would test the other pooler's case again.
    onUnprepared: () => {
      if (pooler.preparedStatements !== undefined) report.problems.push('the instance fell back to unnamed statements');
    },
  };
  return {
    route,
    alongside: (shared) => {
      const stop = probeScopes(shared.tenantDatabase, ['alpha', 'beta', NO_TENANT]);
      return async () => addReport(report, await stop());
    },
  };
}

/** Runs `lanes`, then checks that the probes found nothing wrong and that statements of different tenants did share server connections. */
async function withProbes(t: ExecutionContext, lanes: (report: ProbeReport) => Promise<void>): Promise<void> {
  const report = emptyReport();
  try {
    await lanes(report);
  } finally {
    t.log(`${report.statements} probes beside it, on ${report.backends.size} server connections, ${sharedBackends(report)} of which ran statements of several tenants; ${report.problems.length} problems${tally(report.problems)}`);
  }
  t.deepEqual([...new Set(report.problems)].slice(0, 10), [], `${report.problems.length} probes ran under another scope or saw another tenant's rows`);
  t.true(sharedBackends(report) > 0, 'statements of different tenants took turns on the same server connections');
}

/** The distinct problems, each with how often it was found. */
function tally(problems: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const problem of problems) counts.set(problem, (counts.get(problem) ?? 0) + 1);
  return counts.size === 0 ? '' : `: ${[...counts].map(([problem, count]) => `${problem} (${count})`).join('; ')}`;
}

interface Scoped {
  owners: string;
  role: string;
  setting: string | null;
  timeout: string;
}

for (const pooler of POOLERS) {
  poolerTest(pooler)(`through ${pooler.name} (transaction mode), documents, both walls: ${DOCUMENT_CASES} generated filters × ${OPERATIONS_PER_CASE} operations, no leak`, async (t) => {
    started(pooler);
    const begun = performance.now();
    await withProbes(t, (report) => inLanes(DOCUMENT_CASES, (runs) => documentLane(runs, throughPooler(pooler, report))));
    t.log(`${DOCUMENT_CASES * OPERATIONS_PER_CASE} operations in ${Math.round(performance.now() - begun)} ms`);
  });

  poolerTest(pooler)(`through ${pooler.name} (transaction mode), spaces, both walls: ${SPACE_CASES} generated command sequences, concurrent across tenants, no leak`, async (t) => {
    started(pooler);
    await withProbes(t, (report) => inLanes(SPACE_CASES, (runs) => spaceLane(runs, throughPooler(pooler, report))));
  });

  poolerTest(pooler)(`through ${pooler.name} (transaction mode), row-level security alone: ${RLS_ALONE_DOCUMENT_CASES} filters, ${SPACE_CASES} space sequences and ${SPACE_CASES} audit sequences, no leak`, async (t) => {
    started(pooler);
    const restore = dropApplicationTenantConditionForTest();
    try {
      await withProbes(t, async (report) => {
        await inLanes(RLS_ALONE_DOCUMENT_CASES, (runs) => documentLane(runs, throughPooler(pooler, report)));
        await inLanes(SPACE_CASES, (runs) => spaceLane(runs, throughPooler(pooler, report)));
        await inLanes(SPACE_CASES, (runs) => auditLane(runs, throughPooler(pooler, report)));
      });
    } finally {
      restore();
    }
  });

  poolerTest(pooler)(`through ${pooler.name} (transaction mode), no statement runs under another's role, tenant or time limit, failures included, and none is left on a server connection (${SCOPE_RUNS} cases)`, async (t) => {
    const pooled = started(pooler);
    const database: MigratedDatabase = await migratedDatabase(['alpha', 'beta']);
    let givenUp = 0;
    const onUnprepared = () => {
      givenUp += 1;
    };
    const tenantDatabase = new TenantDatabase(pooled.pooled(database.url), { queryTimeoutMs: STATEMENT_TIMEOUT_MS, poolMax: CLIENT_POOL, onUnprepared });
    t.teardown(async () => {
      await tenantDatabase.close();
      await database.close();
    });
    await database.knex('documents').insert([
      { tenant: 'alpha', collection: 'notes', id: 'n1', doc: { _id: 'n1', owner: 'alpha' } },
      { tenant: 'beta', collection: 'notes', id: 'n1', doc: { _id: 'n1', owner: 'beta' } },
    ]);
    const sql = `select coalesce(string_agg(doc->>'owner', ','), '') as owners, current_user as role,
      current_setting('${TENANT_SETTING}', true) as setting, current_setting('statement_timeout') as timeout from documents`;
    const step = fc.record({ tenant: fc.constantFrom('alpha', 'beta', NO_TENANT), fails: fc.boolean() });
    let statements = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        const seen = await Promise.all(
          steps.map(async ({ tenant, fails }) => {
            statements++;
            const result = await tenantDatabase.query<Scoped>(tenant, { sql: fails ? 'select 1 / 0' : sql, bindings: [] }).catch(() => undefined);
            return { tenant, row: result?.rows[0] };
          }),
        );
        for (const { tenant, row } of seen) {
          if (row === undefined) continue;
          const wanted = { owners: tenant, role: TENANT_ROLE, setting: tenant, timeout: `${STATEMENT_TIMEOUT_MS}ms` };
          const got = { ...row, setting: row.setting ?? '' };
          if (!isDeepStrictEqual(got, wanted)) throw new Error(`a statement for "${tenant}" ran as ${JSON.stringify(got)}`);
        }
      }),
      { numRuns: SCOPE_RUNS, includeErrorInReport: true },
    );
    const leftovers = await leftoverScopes(pooled.pooled(database.url));
    t.log(`${statements} statements; a plain client then found on the server connections: ${leftovers.length === 0 ? 'nothing left' : leftovers.join('; ')}`);
    t.deepEqual(leftovers, [], 'no role, tenant or time limit left on a server connection');
    if (pooler.preparedStatements !== undefined) t.is(givenUp, 0, 'the statements stayed prepared through it');
  });
}
