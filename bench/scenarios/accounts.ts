import path from 'node:path';
import { databaseCpuProbe } from '../harness/database-cpu.ts';
import { cpuAtMost, p99AtMost, throughputAtLeast } from '../harness/goals.ts';
import { measureInTurn } from '../harness/load.ts';
import { withChildServer, type ChildServer } from '../harness/processes.ts';
import type { Row, Section } from '../harness/results.ts';
import type { BenchContext } from './context.ts';
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
  const accounts = context.settings.accounts.toLocaleString('en-US');
  const subject: Row = { server: 'spaceport (document store)', measurement: throughService, note: `${accounts} accounts in the tenant` };
  const floor: Row = { server: 'bare pg pool', measurement: bare, note: 'node:http + one indexed query' };
  return {
    title: '3. POST /api/sample/getOneAccount',
    rows: [subject, floor],
    verdicts: [throughputAtLeast(subject, floor, 0.75), p99AtMost(subject, floor, 2.0), cpuAtMost(subject, floor, 1.6)],
  };
}
