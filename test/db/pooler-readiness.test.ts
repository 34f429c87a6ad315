import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { Knex } from 'knex';
import pg from 'pg';
import { createTenant } from '../../lib/tenancy/index.ts';
import { testKnex } from '../helpers/database.ts';
import { databaseProxy } from '../helpers/database-proxy.ts';
import { boundUnderLoad } from '../helpers/machine-load.ts';
import { pgbouncerBinary, startPooler, type PgBouncer } from '../helpers/pgbouncer.ts';
import { json, migrateFileDatabase, startWithProjects, writeTree } from '../helpers/projects.ts';
import { dropTestDatabase, testDatabaseUrl, type ServiceUnderTest } from '../helpers/service.ts';

// SPEC §17.2: `/readyz` and `/healthz` check the database on a connection no tenant can take.
// Behind a transaction-mode PgBouncer, a connection kept for the checks is only a client of it,
// and its `select 1` waits for one of the server connections tenants' transactions hold: with
// PgBouncer's pool full, every instance answered 503 at once (after 1.5 s) and the balancer took
// the whole fleet out. Behind a pooler the checks ask the database on DATABASE_DIRECT_URL, and
// that a login through the pooler completes (PgBouncer logs a client in by itself).

// Decided before any test is declared: ava takes declarations only until the file first waits.
const pgbouncer = await pgbouncerBinary();
if ('missing' in pgbouncer && !process.env.CI) process.stderr.write(`${pgbouncer.missing}: the pooler readiness tests are skipped\n`);
const poolerTest = 'path' in pgbouncer || process.env.CI ? test.serial : test.serial.skip;

const ROUTES = `
import { existsSync } from 'node:fs';
import { db } from 'spaceport';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export default [
  { method: 'POST', path: '/hold', skipAuth: true, function: async (req, res) => {
    res.json(await db.transaction(async (tx) => {
      const count = await tx.collection('held').countDocuments({});
      // Until the file \`?until=\` names exists (30 s at most).
      const end = Date.now() + 30000;
      while (req.query.until && !existsSync(req.query.until) && Date.now() < end) await sleep(20);
      return { count };
    }));
  } },
];
`;

let owner: Knex;

test.before(async () => {
  await migrateFileDatabase();
  owner = testKnex(await testDatabaseUrl());
  for (const tenant of ['acme', 'globex']) await createTenant(owner, tenant);
});

test.after.always(async () => {
  await owner?.destroy();
  await dropTestDatabase();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A PgBouncer of one server connection in front of the file's database (at `serverUrl`, a relay to it). */
async function poolerOfOne(t: ExecutionContext, serverUrl?: string): Promise<PgBouncer> {
  if ('missing' in pgbouncer) throw new Error(pgbouncer.missing);
  return startPooler(t, { binary: pgbouncer.path, serverUrl: serverUrl ?? (await testDatabaseUrl()), poolSize: 1 });
}

/** The service with the `/hold` route, `DATABASE_URL` naming `pooledUrl` and `DATABASE_DIRECT_URL` `directUrl`. */
async function serviceBehind(t: ExecutionContext, pooledUrl: string, directUrl: string, env: Record<string, string> = {}): Promise<ServiceUnderTest> {
  return startWithProjects(t, writeTree({ 'desk/api/routes.js': ROUTES }), { env: { DATABASE_URL: pooledUrl, DATABASE_DIRECT_URL: directUrl, ...env } });
}

/**
 * A transaction of `tenant` held open by a request until the test ends; resolves once PostgreSQL
 * shows it open (so PgBouncer's one server connection is taken).
 */
async function holdTransaction(t: ExecutionContext, service: ServiceUnderTest, tenant: string): Promise<void> {
  const release = path.join(writeTree({}), 'release');
  const held = service.fetch(`/api/desk/hold?until=${encodeURIComponent(release)}`, { method: 'POST', headers: { tenant } });
  t.teardown(async () => {
    writeFileSync(release, '');
    await held;
  });
  const deadline = Date.now() + 20_000;
  while ((await transactionsOpen()) < 1 && Date.now() < deadline) await sleep(50);
  t.is(await transactionsOpen(), 1, 'the tenant holds a transaction open');
}

/** Backends of the file's database inside a transaction now. */
async function transactionsOpen(): Promise<number> {
  const { rows } = await owner.raw<{ rows: unknown[] }>(
    "select 1 from pg_stat_activity where datname = current_database() and backend_type = 'client backend' and xact_start is not null and pid <> pg_backend_pid()",
  );
  return rows.length;
}

interface Probe {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly ms: number;
}

async function probe(service: ServiceUnderTest, pathname: '/readyz' | '/healthz'): Promise<Probe> {
  const started = performance.now();
  const response = await service.fetch(pathname);
  return { status: response.status, body: await json(response), ms: Math.round(performance.now() - started) };
}

const unavailable = { status: 503, body: { error: 'database unavailable' } };
const ok = { status: 200, body: { status: 'ok' } };

/** Both probes, asked together, without their times. */
async function probes(service: ServiceUnderTest): Promise<Array<Pick<Probe, 'status' | 'body'>>> {
  const answers = await Promise.all([probe(service, '/readyz'), probe(service, '/healthz')]);
  return answers.map(({ status, body }) => ({ status, body }));
}

poolerTest("a tenant's transaction holding PgBouncer's only server connection: /readyz and /healthz answer 200, the instance is busy, not unready", async (t) => {
  const pooler = await poolerOfOne(t);
  const direct = await testDatabaseUrl();
  const service = await serviceBehind(t, pooler.url, direct);
  await holdTransaction(t, service, 'acme');
  const [ready, health] = await Promise.all([probe(service, '/readyz'), probe(service, '/healthz')]);
  t.deepEqual([ready.status, ready.body], [200, { status: 'ok' }], `/readyz after ${ready.ms} ms`);
  t.deepEqual([health.status, health.body], [200, { status: 'ok' }], `/healthz after ${health.ms} ms`);
});

poolerTest('PgBouncer stopped: /readyz and /healthz answer 503 database unavailable within their limit', async (t) => {
  const pooler = await poolerOfOne(t);
  const service = await serviceBehind(t, pooler.url, await testDatabaseUrl());
  t.deepEqual(await probes(service), [ok, ok]);
  await pooler.stop();
  const answers = await Promise.all([probe(service, '/readyz'), probe(service, '/healthz')]);
  for (const answer of answers) {
    t.deepEqual({ status: answer.status, body: answer.body }, unavailable);
    t.true(answer.ms < boundUnderLoad(3000), `answered after ${answer.ms} ms`);
  }
});

poolerTest('PgBouncer hung (connections accepted, never answered): a flood of checks answers 503 within the limit, and costs one login', async (t) => {
  const pooler = await poolerOfOne(t);
  // In front of PgBouncer: black-holed, it is a pooler that accepts and never answers.
  const front = await databaseProxy(pooler.url);
  t.teardown(() => front.close());
  const service = await serviceBehind(t, front.url, await testDatabaseUrl());
  t.is((await probe(service, '/readyz')).status, 200);
  front.blackHole();
  const before = front.connections().opened;
  const answers = await Promise.all(Array.from({ length: 20 }, (_, index) => probe(service, index % 2 === 0 ? '/readyz' : '/healthz')));
  for (const answer of answers) {
    t.deepEqual({ status: answer.status, body: answer.body }, unavailable);
    t.true(answer.ms < boundUnderLoad(3000), `answered after ${answer.ms} ms`);
  }
  t.true(front.connections().opened - before <= 1, `${front.connections().opened - before} logins for 20 checks asked together`);
});

poolerTest('PostgreSQL unreachable on DATABASE_DIRECT_URL while PgBouncer is up: /readyz and /healthz answer 503 database unavailable', async (t) => {
  const pooler = await poolerOfOne(t);
  const direct = await databaseProxy(await testDatabaseUrl());
  t.teardown(() => direct.close());
  const service = await serviceBehind(t, pooler.url, direct.url);
  t.deepEqual(await probes(service), [ok, ok]);
  direct.cut();
  t.deepEqual(await probes(service), [unavailable, unavailable]);
});

poolerTest('PgBouncer cut off from PostgreSQL while the direct connection answers: /readyz and /healthz answer 503 database unavailable', async (t) => {
  const direct = await testDatabaseUrl();
  // Between PgBouncer and PostgreSQL only: the service's direct connection does not go through it.
  const serverPath = await databaseProxy(direct);
  t.teardown(() => serverPath.close());
  const pooler = await poolerOfOne(t, serverPath.url);
  const service = await serviceBehind(t, pooler.url, direct);
  t.deepEqual(await probes(service), [ok, ok]);
  serverPath.cut();
  // The first check may find PgBouncer still trying to log in to PostgreSQL, its statement waiting as for a busy
  // pooler; once a login failed, PgBouncer refuses statements at once ('server login has been failing').
  const deadline = Date.now() + boundUnderLoad(10_000);
  let answers = await probes(service);
  while (answers[0]?.status === 200 && Date.now() < deadline) {
    await sleep(100);
    answers = await probes(service);
  }
  t.deepEqual(answers, [unavailable, unavailable]);
});

poolerTest("behind PgBouncer, the instance's one connection held by a tenant's transaction: another tenant gets 503 naming the busy pool, not database unavailable", async (t) => {
  const connectMs = 2000;
  const pooler = await poolerOfOne(t);
  const service = await serviceBehind(t, pooler.url, await testDatabaseUrl(), { DATABASE_POOL_MAX: '1', DATABASE_CONNECT_TIMEOUT_MS: String(connectMs) });
  // The checks' own connection opened now, not while the pool is held (a loaded machine may take long to open one).
  t.is((await probe(service, '/readyz')).status, 200);
  const globex = () =>
    service.fetch('/api/desk/hold', { method: 'POST', headers: { tenant: 'globex' } }).then(async (response) => ({ status: response.status, retryAfter: response.headers.get('retry-after'), body: await json(response) }));
  t.is((await globex()).status, 200, 'globex is known to the instance before its pool fills');
  await holdTransaction(t, service, 'acme');
  t.deepEqual(await globex(), {
    status: 503,
    retryAfter: '1',
    body: { error: `all 1 database connections of this instance stayed busy for ${connectMs} ms (DATABASE_POOL_MAX, DATABASE_CONNECT_TIMEOUT_MS)` },
  });
});

poolerTest("behind PgBouncer, a statement queued past its time limit behind another tenant's transaction answers 503 'cancelled at its time limit', not database unavailable", async (t) => {
  const pooler = await poolerOfOne(t);
  const service = await serviceBehind(t, pooler.url, await testDatabaseUrl());
  t.is((await probe(service, '/readyz')).status, 200);
  const globex = () => service.fetch('/api/desk/hold', { method: 'POST', headers: { tenant: 'globex' } }).then(async (response) => ({ status: response.status, body: await json(response) }));
  t.is((await globex()).status, 200, 'globex is known to the instance before the pooler fills');
  await holdTransaction(t, service, 'acme');
  t.deepEqual(await globex(), { status: 503, body: { error: 'database statement cancelled at its time limit' } });
  t.false(service.logText().includes('database unreachable'), 'nothing logged the database as gone');
});

poolerTest('behind PgBouncer, a database that stops answering: a statement answers 503 database unavailable within 2 s (SPEC §7)', async (t) => {
  // The database itself frozen, on both of the service's paths to it: PgBouncer's server connections and the direct one.
  const database = await databaseProxy(await testDatabaseUrl());
  t.teardown(() => database.close());
  const pooler = await poolerOfOne(t, database.url);
  const service = await serviceBehind(t, pooler.url, database.url);
  t.is((await probe(service, '/readyz')).status, 200);
  const globex = async () => {
    const started = performance.now();
    const response = await service.fetch('/api/desk/hold', { method: 'POST', headers: { tenant: 'globex' } });
    return { status: response.status, body: await json(response), ms: Math.round(performance.now() - started) };
  };
  t.is((await globex()).status, 200, 'globex is known to the instance before the database stops answering');
  database.freeze();
  t.teardown(() => database.thaw());
  const answer = await globex();
  t.log(`${answer.ms} ms`);
  t.deepEqual({ status: answer.status, body: answer.body }, unavailable);
  t.true(answer.ms < boundUnderLoad(2000), `answered after ${answer.ms} ms`);
});

poolerTest('behind PgBouncer, many checks (passing, and with the pooler busy) leave no client of the pooler and no backend behind', async (t) => {
  const pooler = await poolerOfOne(t);
  const front = await databaseProxy(pooler.url);
  t.teardown(() => front.close());
  const service = await serviceBehind(t, front.url, await testDatabaseUrl());
  const backendsBefore = await backends();
  for (let check = 0; check < 30; check++) t.is((await probe(service, check % 2 === 0 ? '/readyz' : '/healthz')).status, 200);
  await holdTransaction(t, service, 'acme');
  const openWhileHeld = front.connections().open;
  for (let check = 0; check < 6; check++) t.is((await probe(service, '/readyz')).status, 200, 'a busy pooler is not an unready instance');
  await sleep(300);
  t.log(`opened ${front.connections().opened}, open ${front.connections().open} (${openWhileHeld} while held), backends ${backendsBefore} then ${await backends()}`);
  t.true(front.connections().open <= openWhileHeld, `${front.connections().open} clients of the pooler open, ${openWhileHeld} before the busy checks`);
  t.true((await backends()) <= backendsBefore + 1, 'no backend left by the checks');
});

/** Backends of the file's database now, but the test's own. */
async function backends(): Promise<number> {
  const { rows } = await owner.raw<{ rows: unknown[] }>("select 1 from pg_stat_activity where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()");
  return rows.length;
}

poolerTest("PgBouncer at its max_client_conn, serving the clients it has: /readyz answers 200, the instance's statements are served", async (t) => {
  if ('missing' in pgbouncer) return t.fail(pgbouncer.missing);
  const pooler = await startPooler(t, { binary: pgbouncer.path, serverUrl: await testDatabaseUrl(), poolSize: 2, maxClients: 3 });
  const service = await serviceBehind(t, pooler.url, await testDatabaseUrl(), { DATABASE_POOL_MAX: '2' });
  const acme = () => service.fetch('/api/desk/hold', { method: 'POST', headers: { tenant: 'acme' } }).then((response) => response.status);
  t.is(await acme(), 200);
  // Another application's clients take the pooler's other places (the instance keeps its own connection open).
  const others: pg.Client[] = [];
  t.teardown(() => Promise.all(others.map((client) => client.end().catch(() => undefined))));
  for (let place = 0; place < 3; place++) {
    const client = new pg.Client({ connectionString: pooler.url });
    client.on('error', () => {});
    try {
      await client.connect();
      others.push(client);
    } catch {
      break;
    }
  }
  t.is(await acme(), 200, "the instance's statements still go through its open connection");
  const ready = await probe(service, '/readyz');
  t.deepEqual({ status: ready.status, body: ready.body }, ok, `/readyz after ${ready.ms} ms with ${others.length} other clients`);
});
