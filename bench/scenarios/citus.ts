import { findAccountByUsername } from '../../lib/auth/accounts.ts';
import { distributeTables } from '../../lib/db/distribute.ts';
import { createKnex } from '../../lib/db/connect.ts';
import type { ScopeForm } from '../../lib/db/scoped-query.ts';
import { TenantDatabase } from '../../lib/db/tenant-database.ts';
import { startCitusCluster } from '../../test/helpers/citus.ts';
import { seedAccounts } from '../harness/accounts.ts';
import { databaseCpuProbe } from '../harness/database-cpu.ts';
import { measureInTurn } from '../harness/load.ts';
import { withChildServer, type ChildServer } from '../harness/processes.ts';
import type { Row, Section } from '../harness/results.ts';
import { serviceProcess } from '../harness/service.ts';
import type { BenchContext } from './context.ts';
import { getOneAccount } from './requests.ts';

const TITLE = '8. getOneAccount on Citus (coordinator and two workers)';

/**
 * SPEC §14.8: getOneAccount on Citus (built from the release tarball, cached; a coordinator and
 * two workers on this machine), the same accounts distributed by `make distribute`'s code, vs
 * the same service on plain PostgreSQL, measured in turn. No target: the ratio is reported. The
 * time goes to the extra hop (coordinator to worker, over loopback) and the transaction block
 * the scope needs on Citus (`begin`, three `set local`, the statement, `commit`; the coordinator
 * opens the worker's transaction with the same settings).
 */
export async function citusSection(context: BenchContext, plain: ChildServer): Promise<Section> {
  const cluster = await startCitusCluster('spaceport_bench');
  if ('missing' in cluster) return notMeasured(cluster.missing);
  try {
    context.progress(`8. ${context.settings.accounts.toLocaleString('en-US')} accounts on Citus, then getOneAccount there and on plain PostgreSQL, in turn`);
    await seedAccounts(cluster.url, context.settings.accounts);
    const knex = createKnex(cluster.url);
    try {
      await distributeTables(knex);
    } finally {
      await knex.destroy();
    }
    const options = serviceProcess({ ...context.setup, databaseUrl: cluster.url }, 'spaceport-citus', context.projectsDir, 'sample');
    const [onCitus, onPlain] = await withChildServer(options, (citus) =>
      measureInTurn(
        [
          { target: getOneAccount(citus.origin, context.usernames), server: citus, database: databaseCpuProbe(cluster.url) },
          { target: getOneAccount(plain.origin, context.usernames), server: plain, database: databaseCpuProbe(context.setup.databaseUrl) },
        ],
        context.settings,
      ),
    );
    const subject: Row = { server: 'spaceport on Citus', measurement: onCitus, note: 'coordinator + 2 workers on loopback, 32 shards' };
    const floor: Row = { server: 'spaceport on plain PostgreSQL', measurement: onPlain };
    const ratio = onCitus.requestsPerSecond / onPlain.requestsPerSecond;
    const valid = onCitus.failures === 0 && onPlain.failures === 0;
    context.progress('8. where the time goes: one account lookup at a time, each way');
    const breakdown = await lookupBreakdown(context.setup.databaseUrl, cluster.url, context.usernames);
    return {
      title: TITLE,
      rows: [subject, floor],
      verdicts: [
        { target: 'reported, no target: req/s on Citus ÷ on plain PostgreSQL', actual: `${ratio.toFixed(2)} ×`, outcome: valid ? 'met' : 'not valid' },
        { target: 'reported, no target: where the time goes (the lookup statement alone, one at a time, median)', actual: breakdown, outcome: 'met' },
      ],
    };
  } finally {
    await cluster.stop();
  }
}

const LOOKUPS = 400;
const WARM_UP = 50;

/**
 * The account lookup of getOneAccount (`findAccountByUsername`, the service's own statement and
 * scope), one at a time on one connection, three ways: on plain PostgreSQL in the form it uses
 * there (the scope and the statement before one Sync); on plain PostgreSQL in the Citus form
 * (`begin`, the `set local`s, the statement, `commit`: what the form itself costs); on the
 * Citus coordinator (what the hop to the worker and the distributed planning add). The median
 * of each, in microseconds.
 */
async function lookupBreakdown(plainUrl: string, citusUrl: string, usernames: readonly string[]): Promise<string> {
  const ways: Array<[string, string, ScopeForm]> = [
    ['plain PostgreSQL', plainUrl, 'statement'],
    ['plain PostgreSQL in the Citus form', plainUrl, 'citus'],
    ['Citus coordinator', citusUrl, 'citus'],
  ];
  const medians: string[] = [];
  for (const [label, url, scopeForm] of ways) {
    const database = new TenantDatabase(url, { scopeForm, poolMax: 1 });
    try {
      const times: number[] = [];
      for (let lookup = 0; lookup < LOOKUPS + WARM_UP; lookup++) {
        const started = performance.now();
        await findAccountByUsername(database, 'default', usernames[lookup % usernames.length] ?? '');
        if (lookup >= WARM_UP) times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      medians.push(`${label} ${Math.round((times[Math.floor(times.length / 2)] ?? 0) * 1000)} µs`);
    } finally {
      await database.close();
    }
  }
  return medians.join('; ');
}

function notMeasured(why: string): Section {
  return { title: TITLE, rows: [], verdicts: [{ target: 'req/s on Citus ÷ on plain PostgreSQL', actual: `not measured: ${why}`, outcome: 'not valid' }] };
}
