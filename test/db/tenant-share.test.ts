import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import type { Knex } from 'knex';
import { createTenant } from '../../lib/tenancy/index.ts';
import { METRICS_TOKEN, sampleValue, scrape } from '../helpers/metrics.ts';
import { json, migrateFileDatabase, startWithProjects, writeTree } from '../helpers/projects.ts';
import { quickLogin, type Login } from '../helpers/prototypes.ts';
import { dropTestDatabase, testDatabaseUrl, type ServiceUnderTest } from '../helpers/service.ts';
import { testKnex } from '../helpers/database.ts';
import { databaseProxy } from '../helpers/database-proxy.ts';

// SPEC §17.2 (issue 33, point 2): a tenant's share of the pool. One tenant holding transactions
// in as many requests as it likes gets at most `limits.tenantConnections` connections (half the
// pool by default); the rest of its statements wait in its own queue for `limits.queueMs`, then
// 503 for it alone, while another tenant's statements, its login, and the readiness probes
// (on a connection of their own) go ahead. Before: 12 such requests took all 10 connections,
// and every tenant, /readyz and /healthz answered 503.

test.after.always(dropTestDatabase);

const POOL = 10;
const SHARE = POOL / 2;
const QUEUE_MS = 1500;
/** Longer than the queue, so that statements over the share are refused rather than served late. */
const HOLD_MS = 3500;

const ROUTES = `
import { existsSync } from 'node:fs';
import { db } from 'spaceport';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** \`ms\` milliseconds, or until the file \`?until=\` names exists. */
async function wait(query) {
  const end = Date.now() + Number(query.ms);
  do await sleep(query.until ? 20 : Number(query.ms));
  while (query.until && !existsSync(query.until) && Date.now() < end);
}
export default [
  { method: 'POST', path: '/hold', skipAuth: true, function: async (req, res) => {
    res.json(await db.transaction(async (tx) => {
      const count = await tx.collection('held').countDocuments({});
      await wait(req.query);
      return { count };
    }));
  } },
];
`;

let service: ServiceUnderTest;
let owner: Knex;
let globexLogin: Login;

test.before(async () => {
  await migrateFileDatabase();
  owner = testKnex(await testDatabaseUrl());
  for (const tenant of ['acme', 'globex']) await createTenant(owner, tenant);
  service = await startWithProjects(undefined, writeTree({ 'desk/api/routes.js': ROUTES }), {
    env: { DATABASE_POOL_MAX: String(POOL), METRICS_TOKEN },
    expert: { spaces: { enabled: true }, limits: { queueMs: QUEUE_MS } },
  });
  globexLogin = await quickLogin(service, 'globex');
});

test.after.always(async () => {
  await service?.close();
  await owner?.destroy();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function hold(tenant: string, ms: number): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
  const started = Date.now();
  return service.fetch(`/api/desk/hold?ms=${ms}`, { method: 'POST', headers: { tenant } }).then(async (response) => ({ status: response.status, body: await json(response), ms: Date.now() - started }));
}

/** The service's backends inside a transaction now, waiting or running a statement of it. */
async function transactionsOpen(): Promise<number> {
  const { rows } = await owner.raw<{ rows: unknown[] }>(
    "select 1 from pg_stat_activity where datname = current_database() and backend_type = 'client backend' and xact_start is not null and pid <> pg_backend_pid()",
  );
  return rows.length;
}

async function globexStatuses(): Promise<Record<string, number>> {
  const credentials = JSON.stringify({ username: globexLogin.username, password: globexLogin.password });
  const [login, ready, health] = await Promise.all([
    service.fetch('/auth/login', { method: 'POST', headers: { tenant: 'globex', 'content-type': 'application/json' }, body: credentials }),
    service.fetch('/readyz'),
    service.fetch('/healthz'),
  ]);
  const { token } = (await login.json()) as { token?: string };
  const spaces = await service.fetch('/spaces', { headers: { tenant: 'globex', authorization: `Bearer ${token}` } });
  return { login: login.status, spaces: spaces.status, ready: ready.status, health: health.status };
}

test.serial('12 requests of one tenant holding transactions: it gets its share, the rest 503 after limits.queueMs; another tenant, /readyz and /healthz answer 200 meanwhile', async (t) => {
  const acme = Array.from({ length: 12 }, () => hold('acme', HOLD_MS));
  t.teardown(() => Promise.all(acme));
  const deadline = Date.now() + 4000;
  while ((await transactionsOpen()) < SHARE && Date.now() < deadline) await sleep(50);
  await sleep(300);
  t.is(await transactionsOpen(), SHARE, 'the tenant holds its share of the pool, no more');
  t.deepEqual(await globexStatuses(), { spaces: 200, login: 200, ready: 200, health: 200 });
  const answers = await Promise.all(acme);
  const served = answers.filter((answer) => answer.status === 200);
  const refused = answers.filter((answer) => answer.status === 503);
  t.is(served.length, SHARE, JSON.stringify(answers.map((answer) => answer.status)));
  t.is(refused.length, 12 - SHARE);
  for (const answer of refused) {
    t.deepEqual(answer.body, { error: `too many database statements of this tenant at once: its ${SHARE} connections (limits.tenantConnections) stayed busy for ${QUEUE_MS} ms (limits.queueMs)` });
    t.true(answer.ms >= QUEUE_MS - 50, `refused after waiting ${answer.ms} ms`);
  }
  const metrics = await scrape(service);
  t.true(sampleValue(metrics, 'spaceport_db_share_wait_seconds_count', { class: 'tenant', outcome: 'refused' }) >= 12 - SHARE);
  t.is(sampleValue(metrics, 'spaceport_db_tenants_at_share'), 0, 'no tenant at its share once the requests are answered');
  const text = await (await service.fetch('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  t.false(/acme|globex/.test(text), 'no series names a tenant');
});

test.serial('a tenant over its share waits in its queue and is served once one of its connections is free', async (t) => {
  const answers = await Promise.all(Array.from({ length: SHARE + 2 }, () => hold('acme', 300)));
  t.deepEqual(
    answers.map((answer) => answer.status),
    Array.from({ length: SHARE + 2 }, () => 200),
  );
  const metrics = await scrape(service);
  t.true(sampleValue(metrics, 'spaceport_db_share_wait_seconds_count', { class: 'tenant', outcome: 'granted' }) >= 2);
});

test.serial('while the tenant waits at its share, the gauges count it, without its name', async (t) => {
  const acme = Array.from({ length: SHARE + 1 }, () => hold('acme', QUEUE_MS + 1000));
  t.teardown(() => Promise.all(acme));
  const deadline = Date.now() + 4000;
  let gauges = { atShare: 0, waiting: 0 };
  while (Date.now() < deadline && (gauges.atShare !== 1 || gauges.waiting !== 1)) {
    const metrics = await scrape(service);
    gauges = { atShare: sampleValue(metrics, 'spaceport_db_tenants_at_share'), waiting: sampleValue(metrics, 'spaceport_db_share_waiting_statements') };
  }
  t.deepEqual(gauges, { atShare: 1, waiting: 1 });
  await Promise.all(acme);
});

test.serial('/readyz and /healthz check the database on a connection of their own: 200 while tenants hold every connection of the pool', async (t) => {
  const full = await startWithProjects(t, writeTree({ 'desk/api/routes.js': ROUTES }), {
    env: { DATABASE_POOL_MAX: '2' },
    expert: { limits: { tenantConnections: 2, queueMs: QUEUE_MS } },
  });
  // Held until the probes have answered (a loaded machine may start the second long after the first).
  const release = path.join(writeTree({}), 'release');
  const held = ['acme', 'globex'].map((tenant) => full.fetch(`/api/desk/hold?ms=30000&until=${encodeURIComponent(release)}`, { method: 'POST', headers: { tenant } }));
  t.teardown(() => Promise.all(held));
  const deadline = Date.now() + 20_000;
  while ((await transactionsOpen()) < 2 && Date.now() < deadline) await sleep(50);
  t.is(await transactionsOpen(), 2, 'both connections of the pool are held');
  const [ready, health] = await Promise.all([full.fetch('/readyz'), full.fetch('/healthz')]);
  t.deepEqual([ready.status, health.status], [200, 200]);
  writeFileSync(release, '');
  t.deepEqual((await Promise.all(held)).map((answer) => answer.status), [200, 200]);
});

test.serial('two tenants at their shares fill the pool: a third tenant gets 503 naming the busy pool, not "database unavailable", and its other statements wait on', async (t) => {
  // Shares may add up to more than the pool: half each by default, so two busy tenants fill it,
  // and a third waits for a connection up to DATABASE_CONNECT_TIMEOUT_MS. The database answers
  // all along: before, that wait's end was taken for the database gone ('database unavailable',
  // and the tenant's other waiting statements refused at once as if it had stopped answering).
  const connectMs = 2000;
  const small = await startWithProjects(t, writeTree({ 'desk/api/routes.js': ROUTES }), {
    env: { DATABASE_POOL_MAX: '4', DATABASE_CONNECT_TIMEOUT_MS: String(connectMs) },
    expert: { limits: { queueMs: 10_000 } },
  });
  await createTenant(owner, 'initech').catch(() => undefined);
  const holdOn = (tenant: string, ms: number) =>
    small.fetch(`/api/desk/hold?ms=${ms}`, { method: 'POST', headers: { tenant } }).then(async (response) => ({ status: response.status, retryAfter: response.headers.get('retry-after'), body: await json(response) }));
  // Known to the instance before the pool fills: its name is looked up on a connection too.
  t.is((await holdOn('initech', 0)).status, 200);
  // Long enough for the third statement below to wait its own time after the first two.
  const holders = ['acme', 'acme', 'globex', 'globex'].map((tenant) => holdOn(tenant, 2 * connectMs + 4000));
  t.teardown(() => Promise.all(holders));
  const deadline = Date.now() + 5000;
  while ((await transactionsOpen()) < 4 && Date.now() < deadline) await sleep(50);
  // initech's share is 2: the third waits in its own queue behind the two waiting for the pool.
  const answers = await Promise.all([0, 1, 2].map(() => holdOn('initech', 0)));
  const busy = { status: 503, retryAfter: '1', body: { error: `all 4 database connections of this instance stayed busy for ${connectMs} ms (DATABASE_POOL_MAX, DATABASE_CONNECT_TIMEOUT_MS)` } };
  t.deepEqual(answers, [busy, busy, busy]);
  t.deepEqual(
    (await Promise.all(holders)).map((answer) => answer.status),
    [200, 200, 200, 200],
  );
});

test.serial('a pool full of statements that a database gone never answers: a waiting statement gets "database unavailable", not the busy pool', async (t) => {
  // pg-pool's 'timeout exceeded when trying to connect' means every connection stayed in use, not
  // that the database answers: when it stopped answering, the statements holding them hang too.
  const direct = await testDatabaseUrl();
  const proxy = await databaseProxy(direct);
  t.teardown(() => proxy.close());
  const connectMs = 1000;
  const small = await startWithProjects(t, writeTree({ 'desk/api/routes.js': ROUTES }), {
    env: { DATABASE_URL: proxy.url, DATABASE_DIRECT_URL: direct, DATABASE_POOL_MAX: '2', DATABASE_CONNECT_TIMEOUT_MS: String(connectMs) },
    expert: { limits: { queueMs: 10_000 } },
  });
  await createTenant(owner, 'initech').catch(() => undefined);
  const holdOn = (tenant: string) =>
    small.fetch('/api/desk/hold?ms=0', { method: 'POST', headers: { tenant } }).then(async (response) => ({ status: response.status, body: await json(response) }));
  for (const tenant of ['acme', 'globex', 'initech']) t.is((await holdOn(tenant)).status, 200, `${tenant} is known before the database goes`);
  proxy.blackHole();
  // One connection each (half the pool): together they take it all, and their statements hang.
  const hung = ['acme', 'globex'].map((tenant) => holdOn(tenant));
  await sleep(300);
  const waited = await holdOn('initech');
  t.deepEqual(waited, { status: 503, body: { error: 'database unavailable' } });
  t.deepEqual(
    (await Promise.all(hung)).map((answer) => answer.status),
    [503, 503],
  );
});
