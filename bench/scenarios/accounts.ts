import path from 'node:path';
import { measure } from '../harness/load.ts';
import { withChildServer, type ChildServer } from '../harness/processes.ts';
import type { Section } from '../harness/table.ts';
import { getOneAccount } from './requests.ts';
import type { BenchContext } from './context.ts';

const PG_POOL_SERVER = path.resolve(import.meta.dirname, '../servers/pg-pool.ts');

/** SPEC §14.3: getOneAccount among the seeded accounts vs the same query on a bare pg pool. */
export async function accountsSection(context: BenchContext, service: ChildServer): Promise<Section> {
  context.progress('3. getOneAccount: spaceport');
  const throughService = await measure(getOneAccount(service.origin, context.usernames), context.settings);
  context.progress('3. getOneAccount: bare pg pool');
  const options = { name: 'bare pg pool', script: PG_POOL_SERVER, env: { DATABASE_URL: context.setup.databaseUrl }, readyPath: '/' };
  const bare = await withChildServer(options, (server) => measure(getOneAccount(server.origin, context.usernames), context.settings));
  const accounts = context.settings.accounts.toLocaleString('en-US');
  return {
    title: '3. POST /api/sample/getOneAccount',
    rows: [
      { server: 'spaceport (document store)', measurement: throughService, note: `${accounts} accounts in the tenant` },
      { server: 'bare pg pool', measurement: bare, note: 'node:http + one indexed query' },
    ],
  };
}
