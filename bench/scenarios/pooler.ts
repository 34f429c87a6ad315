import { pgbouncerBinary, preparingPgBouncerBinary, startPgBouncer } from '../../test/helpers/pgbouncer.ts';
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
/** `max_prepared_statements` of the pooler that keeps them (PgBouncer 1.24's default). */
const PREPARED_STATEMENTS = 200;

/**
 * SPEC §14.6: getOneAccount through PgBouncer in transaction mode vs the same service connected
 * directly, measured in turn: PgBouncer 1.24 keeping the service's prepared statements (built
 * once where it can be), else Debian 12's 1.18, which keeps none. The pooler's server pool is
 * the service's own pool size, so the row measures the extra hop, not a smaller pool.
 */
export async function poolerSection(context: BenchContext, direct: ChildServer): Promise<Section> {
  const preparing = await preparingPgBouncerBinary();
  const binary = 'path' in preparing ? preparing : await pgbouncerBinary();
  if ('missing' in binary) return notMeasured(binary.missing);
  const preparedStatements = binary === preparing ? PREPARED_STATEMENTS : undefined;
  const which = preparedStatements === undefined ? "Debian 12's PgBouncer 1.18 (no prepared statements)" : `PgBouncer 1.24, max_prepared_statements = ${preparedStatements}`;
  context.progress(`6. getOneAccount through ${which} and directly, in turn, ${context.settings.rounds} rounds`);
  const pooler = await startPgBouncer({ binary: binary.path, serverUrl: context.setup.databaseUrl, poolSize: 10, preparedStatements });
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
    const subject: Row = { server: 'spaceport through PgBouncer', measurement: throughPooler, note: `${which}, pool_mode = transaction, default_pool_size = 10; DB CPU includes PgBouncer's` };
    const floor: Row = { server: 'spaceport, direct connection', measurement: directly };
    return { title: TITLE, rows: [subject, floor], verdicts: [throughputAtLeast(subject, floor, TARGET_FACTOR)] };
  } finally {
    await pooler.stop();
  }
}

function notMeasured(why: string): Section {
  return { title: TITLE, rows: [], verdicts: [{ target: `req/s ≥ ${TARGET_FACTOR.toFixed(2)} × spaceport, direct connection`, actual: `not measured: ${why}`, outcome: 'not valid' }] };
}
