import { pgbouncerBinary, startPgBouncer } from '../../test/helpers/pgbouncer.ts';
import { databaseCpuProbe } from '../harness/database-cpu.ts';
import { throughputAtLeast } from '../harness/goals.ts';
import { measureInTurn } from '../harness/load.ts';
import { withChildServer, type ChildServer } from '../harness/processes.ts';
import type { Row, Section } from '../harness/results.ts';
import { serviceProcess } from '../harness/service.ts';
import type { BenchContext } from './context.ts';
import { getOneAccount } from './requests.ts';

const TITLE = '6. getOneAccount through PgBouncer';
const TARGET_FACTOR = 0.9;

/**
 * SPEC §14.6: getOneAccount through PgBouncer in transaction mode (Debian's, installed when
 * missing where it can be) vs the same service connected directly, measured in turn. The
 * pooler's server pool is the service's own pool size, so the row measures the extra hop, not
 * a smaller pool.
 */
export async function poolerSection(context: BenchContext, direct: ChildServer): Promise<Section> {
  const binary = await pgbouncerBinary();
  if ('missing' in binary) return notMeasured(binary.missing);
  context.progress(`6. getOneAccount through PgBouncer and directly, in turn, ${context.settings.rounds} rounds`);
  const pooler = await startPgBouncer({ binary: binary.path, serverUrl: context.setup.databaseUrl, poolSize: 10 });
  try {
    const options = serviceProcess({ ...context.setup, databaseUrl: pooler.url }, 'spaceport-pgbouncer', context.projectsDir, 'sample');
    const pooledOptions = { ...options, env: { ...options.env, DATABASE_DIRECT_URL: context.setup.databaseUrl } };
    // PgBouncer's CPU counts as the database's, in both rows alike (idle in the direct one).
    const database = databaseCpuProbe(context.setup.databaseUrl, ['pgbouncer']);
    const [throughPooler, directly] = await withChildServer(pooledOptions, (pooled) =>
      measureInTurn(
        [
          { target: getOneAccount(pooled.origin, context.usernames), server: pooled, database },
          { target: getOneAccount(direct.origin, context.usernames), server: direct, database },
        ],
        context.settings,
      ),
    );
    const subject: Row = { server: 'spaceport through PgBouncer', measurement: throughPooler, note: "pool_mode = transaction, default_pool_size = 10; DB CPU includes PgBouncer's" };
    const floor: Row = { server: 'spaceport, direct connection', measurement: directly };
    return { title: TITLE, rows: [subject, floor], verdicts: [throughputAtLeast(subject, floor, TARGET_FACTOR)] };
  } finally {
    await pooler.stop();
  }
}

function notMeasured(why: string): Section {
  return { title: TITLE, rows: [], verdicts: [{ target: `req/s ≥ ${TARGET_FACTOR.toFixed(2)} × spaceport, direct connection`, actual: `not measured: ${why}`, outcome: 'not valid' }] };
}
