import path from 'node:path';
import { NO_TENANT, TenantDatabase } from '../../lib/db/tenant-database.ts';
import { documentStore } from '../../lib/documents/index.ts';
import { databaseCpuProbe } from '../harness/database-cpu.ts';
import { cpuAtMost, p99AtMost, throughputAtLeast } from '../harness/goals.ts';
import { measureInTurn } from '../harness/load.ts';
import { withChildServer, type ChildServer } from '../harness/processes.ts';
import type { Row, Section } from '../harness/results.ts';
import type { BenchContext } from './context.ts';
import { clientWay, databaseCpuPerStatement, type StatementWay } from '../harness/statement-cost.ts';
import { FIND_ACCOUNT } from '../servers/lookups.ts';
import { getOneAccount } from './requests.ts';

const PG_POOL_SERVER = path.resolve(import.meta.dirname, '../servers/pg-pool.ts');

/** SPEC §14.3: getOneAccount among the seeded accounts vs the same query on a bare pg pool, measured in turn. */
export async function accountsSection(context: BenchContext, service: ChildServer): Promise<Section> {
  context.progress(`3. getOneAccount: spaceport and a bare pg pool, in turn, ${context.settings.rounds} rounds`);
  const options = { name: 'bare pg pool', script: PG_POOL_SERVER, env: { DATABASE_URL: context.setup.databaseUrl }, readyPath: '/' };
  const database = databaseCpuProbe(context.setup.databaseUrl);
  const [throughService, bare] = await withChildServer(options, (server) =>
    measureInTurn(
      [
        { target: getOneAccount(service.origin, context.usernames), server: service, database },
        { target: getOneAccount(server.origin, context.usernames), server, database },
      ],
      context.settings,
    ),
  );
  context.progress('3. where the database\'s time goes: one lookup at a time, each way');
  const breakdown = await lookupCostInDatabase(context.setup.databaseUrl, context.usernames);
  const accounts = context.settings.accounts.toLocaleString('en-US');
  const subject: Row = { server: 'spaceport (document store)', measurement: throughService, note: `${accounts} accounts in the tenant` };
  const floor: Row = { server: 'bare pg pool', measurement: bare, note: 'node:http + one indexed query' };
  return {
    title: '3. POST /api/sample/getOneAccount',
    rows: [subject, floor],
    verdicts: [
      throughputAtLeast(subject, floor, 0.75),
      p99AtMost(subject, floor, 2.0),
      cpuAtMost(subject, floor, 1.6),
      { target: "reported, no target: PostgreSQL's CPU per lookup, one at a time", actual: breakdown, outcome: 'met' },
    ],
  };
}

/**
 * What PostgreSQL itself spends on each lookup: bare pg's statement as its server sends it
 * (unnamed: parsed and planned every time), the same prepared once (what parsing and planning
 * cost), the service's (the document store's statement with its scope, in one exchange), and
 * the scope alone before an empty statement.
 */
async function lookupCostInDatabase(url: string, usernames: readonly string[]): Promise<string> {
  const username = (n: number) => usernames[n % usernames.length] ?? '';
  const bare = await clientWay("bare pg's", url, (n) => ({ text: FIND_ACCOUNT, values: ['default', username(n)] }));
  const prepared = await clientWay('prepared once', url, (n) => ({ name: 'find_account', text: FIND_ACCOUNT, values: ['default', username(n)] }));
  const database = new TenantDatabase(url, { poolMax: 1 });
  try {
    const { rows } = await database.query<{ pid: number }>(NO_TENANT, { sql: 'select pg_backend_pid() as pid', bindings: [] });
    const backendPid = rows[0]?.pid ?? 0;
    const accounts = documentStore(database, 'default').collection('accounts');
    const ways: StatementWay[] = [
      bare,
      prepared,
      { label: "the service's (scope and statement)", backendPid, send: (n) => accounts.find({ username: username(n) }).limit(1).toArray() },
      { label: 'its scope alone', backendPid, send: () => database.query('default', { sql: 'select', bindings: [] }) },
    ];
    const costs = await databaseCpuPerStatement(ways);
    return ways.map((way, index) => `${way.label} ${costs[index] ?? 'n/a'} µs`).join('; ');
  } finally {
    await Promise.all([bare.close(), prepared.close(), database.close()]);
  }
}
