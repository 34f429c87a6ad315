import test from 'ava';
import type { Knex } from 'knex';
import { createKnex } from '../../lib/db/connect.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { pgbouncerBinary, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';
import { migrateFileDatabase, startWithProjects, writeTree } from '../helpers/projects.ts';
import { quickLogin } from '../helpers/prototypes.ts';
import { dropTestDatabase, testDatabaseUrl, type ServiceUnderTest } from '../helpers/service.ts';

// Issue 33, point 1, as it was found: through PgBouncer in transaction mode with a server pool
// of 4, requests that open a transaction and wait while their clients give up (`timeout 1
// curl`) held the pooler's server connections, "idle in transaction", for as long as their
// handlers waited: every tenant of every instance got 503. Now each such transaction rolls back
// when its client leaves, and the other tenant's requests and /readyz go on.

// Decided before any test or hook is declared: ava takes declarations only until the file first waits.
const pgbouncer = await pgbouncerBinary();
if ('missing' in pgbouncer && !process.env.CI) process.stderr.write(`${pgbouncer.missing}: the abandoned-transactions test is skipped\n`);
const poolerTest = 'path' in pgbouncer || process.env.CI ? test.serial : test.serial.skip;

let pooler: PgBouncer | undefined;
let owner: Knex | undefined;
test.after.always(async () => {
  await owner?.destroy();
  await pooler?.stop();
  await dropTestDatabase();
});

const SERVER_POOL = 4;
const ABANDONED = 10;
/** How long each handler keeps waiting after its client left: the old code held the pooler this long. */
const HANDLER_WAITS_MS = 20_000;

const ROUTES = `
import { db } from 'spaceport';
export default [
  { method: 'POST', path: '/slow-call', skipAuth: true, function: async (req, res) => {
    await db.transaction(async (tx) => {
      await tx.collection('orders').insertOne({ state: 'pending' });
      // A slow external call, or a bug: the transaction stays open meanwhile.
      await new Promise((resolve) => setTimeout(resolve, ${HANDLER_WAITS_MS}));
    }).catch(() => undefined);
    res.json({ done: true });
  } },
];
`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function idleInTransaction(knex: Knex): Promise<number> {
  const { rows } = await knex.raw<{ rows: unknown[] }>("select 1 from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'");
  return rows.length;
}

poolerTest('ten transactions abandoned by their clients through PgBouncer (server pool 4): rolled back at once, and the other tenant, its login and /readyz answer 200', async (t) => {
  if (!('path' in pgbouncer)) throw new Error(pgbouncer.missing);
  const direct = await testDatabaseUrl();
  await migrateFileDatabase();
  owner = createKnex(direct);
  for (const tenant of ['acme', 'globex']) await createTenant(owner, tenant);
  pooler = await startPgBouncer({ binary: pgbouncer.path, serverUrl: direct, poolSize: SERVER_POOL });
  const service: ServiceUnderTest = await startWithProjects(t, writeTree({ 'shop/api/routes.js': ROUTES }), {
    env: { DATABASE_URL: pooler.pooled(direct), DATABASE_DIRECT_URL: direct },
    expert: { spaces: { enabled: true } },
  });
  const login = await quickLogin(service, 'globex');

  const clients = Array.from({ length: ABANDONED }, () => {
    const controller = new AbortController();
    const request = service.fetch('/api/shop/slow-call', { method: 'POST', headers: { tenant: 'acme' }, signal: controller.signal }).catch(() => 'left');
    return { controller, request };
  });
  // As `timeout 1 curl` did: each client gives up after a second.
  await sleep(1000);
  const left = Date.now();
  for (const client of clients) client.controller.abort();
  await Promise.all(clients.map((client) => client.request));
  let open = await idleInTransaction(owner);
  while (open > 0 && Date.now() - left < 5000) {
    await sleep(50);
    open = await idleInTransaction(owner);
  }
  t.log(`no transaction idle ${Date.now() - left} ms after the clients left`);
  t.is(open, 0, 'no backend is idle in transaction');

  const credentials = JSON.stringify({ username: login.username, password: login.password });
  const loggedIn = await service.fetch('/auth/login', { method: 'POST', headers: { tenant: 'globex', 'content-type': 'application/json' }, body: credentials });
  t.is(loggedIn.status, 200);
  const { token } = (await loggedIn.json()) as { token: string };
  const spaces = await service.fetch('/spaces', { headers: { tenant: 'globex', authorization: `Bearer ${token}` } });
  t.is(spaces.status, 200);
  t.is((await service.fetch('/readyz')).status, 200);
  const [{ count }] = await owner('documents').where({ collection: 'orders' }).count({ count: '*' });
  t.is(Number(count), 0, 'nothing of the abandoned transactions was committed');
  t.true(Date.now() - left < HANDLER_WAITS_MS - 2000, 'all of it checked while the handlers still wait');
});
