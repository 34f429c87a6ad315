import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import type { LockAttempt, LockRetry } from '../../lib/db/lock-retries.ts';
import { migrateContract, migrateLatest } from '../../lib/db/migrations.ts';
import { clearState, fleetDatabaseForFile, leaks, scriptStep, tenantOf } from '../helpers/fleet-workload.ts';
import { haproxyBinary, startBalancer } from '../helpers/haproxy.ts';
import { pgbouncerBinary, startPooler, type PgBouncer } from '../helpers/pgbouncer.ts';
import { REDIS_URL, testWithRedis } from '../helpers/redis.ts';
import { makeRelease } from '../helpers/releases.ts';
import { testDatabaseUrl } from '../helpers/service.ts';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';
import { durationOf, type Exchange, steadyLoad, type SteadyLoad } from '../helpers/steady-load.ts';

/**
 * A deploy under load (SPEC §18.4): three instances of release N behind HAProxy, through
 * PgBouncer in transaction mode, under the two-tenant workload of the fleet test plus a ledger
 * route whose storage changes between the releases. Release N+1 (made here: the checkout, an
 * expand migration adding a column and an index, route code writing and reading it, and a
 * contract migration dropping a table only N wrote) goes out as a DBA would roll it: expand,
 * each instance replaced in turn (SIGTERM, /readyz draining, the new one ready), contract. Not
 * one request may fail, and every answer must be right for the release that gave it. Then a long
 * read holds `documents` while an expand migration waits for its lock: the workload's p99 stays
 * under 1 s, because the migration retries instead of queueing every statement behind it.
 */

const SERVER_POOL = 4;
const WORKERS = 6;
const PHASE_MS = 3000;
const UNLIMITED = { windowMs: 60_000, max: 1_000_000 };
/** What HAProxy needs to take a draining instance out (checks every 500 ms, down after 2). */
const UNREADY_MS = 1500;
const BLOCKER_MS = 20_000;

const withRedis = await testWithRedis();
const [haproxy, pgbouncer] = await Promise.all([haproxyBinary(), pgbouncerBinary()]);
const missing = [haproxy, pgbouncer].flatMap((binary) => ('missing' in binary ? [binary.missing] : []));
if (missing.length > 0 && !process.env.CI) process.stderr.write(`${missing.join('; ')}: the rolling upgrade is skipped\n`);
const upgradeTest = missing.length === 0 || process.env.CI ? withRedis : test.serial.skip;

/** Release N's ledger: amounts, each write also noted in `ledger_audit`. */
const LEDGER_N = `
create table ledger (tenant varchar(63) not null references tenants (name), id text not null, amount bigint not null, primary key (tenant, id));
create table ledger_audit (tenant varchar(63) not null references tenants (name), id text not null, at timestamptz not null default now(), primary key (tenant, id));`;

const LEDGER_MIGRATION = `import type { Knex } from 'knex';
export async function up(knex: Knex): Promise<void> {
  await knex.raw(${JSON.stringify(LEDGER_N)});
}
export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table ledger_audit; drop table ledger');
}
`;

/** N+1's expand migration: a column, and an index on it built without holding the table's writes. */
const MEMO_MIGRATION = `import type { Knex } from 'knex';
import { createIndexConcurrently, withLockRetries } from '../lib/db/migration-tools.ts';
export const config = { transaction: false };
export async function up(knex: Knex): Promise<void> {
  await withLockRetries(knex, (trx) => trx.raw('alter table ledger add column if not exists memo text'));
  await createIndexConcurrently(knex, 'ledger_memo', 'on ledger (tenant, memo)');
}
export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists ledger_memo');
  await withLockRetries(knex, (trx) => trx.raw('alter table ledger drop column if exists memo'));
}
`;

/** N+1's contract migration: \`ledger_audit\`, which only N wrote. */
const DROP_AUDIT_MIGRATION = `import type { Knex } from 'knex';
export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop table ledger_audit');
}
export async function down(knex: Knex): Promise<void> {
  await knex.raw("create table ledger_audit (tenant varchar(63) not null references tenants (name), id text not null, at timestamptz not null default now(), primary key (tenant, id))");
}
`;

/** The ledger route of a release: N writes the audit row, N+1 writes and reads the memo instead. */
function ledgerRoutes(release: 'N' | 'N+1'): string {
  const next = release === 'N+1';
  return `import pg from 'pg';
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4, allowExitOnIdle: true });
const tenantOf = (req) => String(req.headers.tenant);
export default [
  {
    method: 'POST',
    path: '/entries',
    function: async (req, res) => {
      const { id, amount, memo } = req.body;
      const client = await pool.connect();
      try {
        await client.query('begin');
        ${
          next
            ? "await client.query('insert into ledger (tenant, id, amount, memo) values ($1, $2, $3, $4)', [tenantOf(req), id, amount, memo]);"
            : "await client.query('insert into ledger (tenant, id, amount) values ($1, $2, $3)', [tenantOf(req), id, amount]);\n        await client.query('insert into ledger_audit (tenant, id) values ($1, $2)', [tenantOf(req), id]);"
        }
        await client.query('commit');
      } catch (error) {
        await client.query('rollback');
        throw error;
      } finally {
        client.release();
      }
      res.status(201).json({ id, release: '${release}' });
    },
  },
  {
    method: 'GET',
    path: '/entries/:id',
    function: async (req, res) => {
      const { rows } = await pool.query('select id, amount::int as amount${next ? ', memo' : ''} from ledger where tenant = $1 and id = $2', [tenantOf(req), req.params.id]);
      if (rows.length === 0) return res.status(404).json({ error: 'no such entry' });
      res.json({ ...rows[0], release: '${release}' });
    },
  },
];
`;
}

const shared = fleetDatabaseForFile();
const { tokens } = shared;

/** Release N: the checkout, the fleet test's notes project (a copy: it must import this release's `spaceport`), and the ledger. */
const RELEASE_N = {
  'projects/notes/api/routes.js': readFileSync(path.resolve(import.meta.dirname, '../fixtures/projects/fleet/notes/api/routes.js'), 'utf8'),
  'migrations/29990101000001_ledger.ts': LEDGER_MIGRATION,
  'projects/ledger/api/routes.js': ledgerRoutes('N'),
};

/** Release N+1: N's files, its ledger route, an expand and a contract migration. */
const RELEASE_NEXT = {
  ...RELEASE_N,
  'projects/ledger/api/routes.js': ledgerRoutes('N+1'),
  'migrations/29990102000001_ledger_memo.ts': MEMO_MIGRATION,
  'migrations/contract/29990102000002_drop_ledger_audit.ts': DROP_AUDIT_MIGRATION,
};

interface Fleet {
  pooler: PgBouncer;
  instances: Record<string, ServiceProcess>;
  url: string;
}

async function startInstance(t: ExecutionContext, release: string, pooler: PgBouncer, port = 0): Promise<ServiceProcess> {
  return startServiceProcess(t, {
    databaseUrl: pooler.pooled(await testDatabaseUrl()),
    redisUrl: REDIS_URL,
    release,
    projectsDir: path.join(release, 'projects'),
    environment: { DATABASE_DIRECT_URL: await testDatabaseUrl(), DATABASE_POOL_MAX: '10', PORT: String(port) },
    expert: { spaces: { enabled: true }, http: { trustProxy: true, unreadyBeforeCloseMs: UNREADY_MS }, rateLimit: { public: UNLIMITED, login: UNLIMITED } },
  });
}

async function startFleet(t: ExecutionContext, release: string): Promise<Fleet> {
  if (!('path' in haproxy)) throw new Error(haproxy.missing);
  if (!('path' in pgbouncer)) throw new Error(pgbouncer.missing);
  const pooler = await startPooler(t, { binary: pgbouncer.path, serverUrl: await testDatabaseUrl(), poolSize: SERVER_POOL });
  const started = await Promise.all(['one', 'two', 'three'].map(async (name) => [name, await startInstance(t, release, pooler)] as const));
  const instances = Object.fromEntries(started);
  const balancer = await startBalancer(t, haproxy.path, Object.fromEntries(started.map(([name, instance]) => [name, instance.port])));
  return { pooler, instances, url: balancer.url };
}

/** One request of the workload and how to judge its answer. */
interface Planned {
  label: string;
  url: string;
  init: RequestInit;
  judge(exchange: Exchange): string | undefined;
}

/**
 * The workload: each worker alternates the fleet script's steps (spaces, notes, logins,
 * getOneAccount, probes of the other tenant) with the ledger: a write, then its read, whose
 * answer must hold what was written, in the shape of the release that answered.
 */
function workload(origin: string): { load: SteadyLoad; planned: Map<string, Planned> } {
  const planned = new Map<string, Planned>();
  const written = new Map<string, { amount: number; memo: string; release?: string }>();
  const load = steadyLoad({
    workers: WORKERS,
    paceMs: 5,
    giveUpMs: 15_000,
    next: (worker, sequence) => {
      const step = sequence % 4 === 1 ? ledgerWrite(origin, worker, sequence, written) : sequence % 4 === 3 ? ledgerRead(origin, worker, sequence - 2, written) : fleetStep(origin, worker, sequence);
      planned.set(step.label, step);
      return step;
    },
  });
  return { load, planned };
}

function fleetStep(origin: string, worker: number, sequence: number): Planned {
  const step = scriptStep(origin, tokens, worker, sequence / 2);
  return {
    label: step.label,
    url: step.url,
    init: step.init ?? {},
    judge: (exchange) => (exchange.status !== step.expected ? `expected ${step.expected}` : leaks(exchange, step.tenant) ? 'shows the other tenant' : undefined),
  };
}

function ledgerHeaders(worker: number): Record<string, string> {
  const tenant = tenantOf(worker);
  return { tenant, authorization: `Bearer ${tokens[tenant]}`, 'content-type': 'application/json' };
}

function ledgerWrite(origin: string, worker: number, sequence: number, written: Map<string, { amount: number; memo: string; release?: string }>): Planned {
  const id = `w${worker}-${sequence}`;
  const entry = { amount: sequence, memo: `memo ${sequence}` };
  written.set(id, entry);
  return {
    label: `w${worker} #${sequence} POST /api/ledger/entries ${id}`,
    url: `${origin}/api/ledger/entries`,
    init: { method: 'POST', headers: ledgerHeaders(worker), body: JSON.stringify({ id, ...entry }) },
    judge: (exchange) => {
      if (exchange.status !== 201) return 'expected 201';
      written.set(id, { ...entry, release: (JSON.parse(exchange.body) as { release: string }).release });
      return undefined;
    },
  };
}

function ledgerRead(origin: string, worker: number, writtenAt: number, written: Map<string, { amount: number; memo: string; release?: string }>): Planned {
  const id = `w${worker}-${writtenAt}`;
  return {
    label: `w${worker} #${writtenAt + 2} GET /api/ledger/entries/${id}`,
    url: `${origin}/api/ledger/entries/${id}`,
    init: { headers: ledgerHeaders(worker) },
    judge: (exchange) => {
      const entry = written.get(id);
      if (exchange.status !== 200 || entry === undefined) return 'expected 200';
      const answer = JSON.parse(exchange.body) as { id: string; amount: number; memo?: string | null; release: string };
      const expected: Record<string, unknown> = { id, amount: entry.amount, release: answer.release };
      if (answer.release === 'N+1') expected.memo = entry.release === 'N+1' ? entry.memo : null;
      return isDeepStrictEqual(answer, expected) ? undefined : `expected ${JSON.stringify(expected)}`;
    },
  };
}

interface PhaseFigures {
  name: string;
  requests: number;
  failures: string[];
  p99: number;
}

/** The exchanges that started within [from, to), judged. */
function figures(name: string, exchanges: readonly Exchange[], planned: Map<string, Planned>, from: number, to: number): PhaseFigures {
  const within = exchanges.filter((exchange) => exchange.startedAt >= from && exchange.startedAt < to);
  const failures = within.flatMap((exchange) => {
    const plan = planned.get(exchange.label);
    const verdict = plan === undefined ? 'not planned' : plan.judge(exchange);
    return verdict === undefined ? [] : [`${exchange.label}: ${exchange.status ?? exchange.error} ${exchange.body.slice(0, 100)} (${verdict})`];
  });
  const durations = within.map(durationOf).sort((a, b) => a - b);
  const p99 = durations[Math.min(durations.length - 1, Math.floor(durations.length * 0.99))] ?? 0;
  return { name, requests: within.length, failures, p99 };
}

const line = (phase: PhaseFigures) => `${phase.name}: ${phase.requests} requests, ${phase.failures.length} failed, p99 ${Math.round(phase.p99)} ms`;

/** Polls the balancer until `instance` answers through it. */
async function servedThroughBalancer(url: string, name: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const response = await fetch(`${url}/readyz`).catch(() => undefined);
    await response?.arrayBuffer();
    if (response?.headers.get('x-served-by') === name) return;
    await sleep(100);
  }
  throw new Error(`the balancer did not send to ${name} within 15 s`);
}

/** The ledger and the fleet workload's rows, gone: each run writes the same names again. */
async function clearRows(): Promise<void> {
  await clearState(shared.owner);
  if (await shared.owner.schema.hasTable('ledger')) await shared.owner('ledger').delete();
}

/** A session that has read `documents` in a transaction it keeps open for `holdMs`. */
async function holdRead(url: string, holdMs: number): Promise<{ released: Promise<void> }> {
  const client = new pg.Client({ connectionString: url, application_name: 'nightly-report' });
  client.on('error', () => {});
  await client.connect();
  await client.query('begin');
  await client.query('select count(*) from documents');
  return {
    released: sleep(holdMs).then(async () => {
      await client.query('commit');
      await client.end();
    }),
  };
}

/** A release N+2 whose only change is an expand migration adding a column to `documents`. */
function documentsNoteRelease(t: ExecutionContext, column: string): string {
  return makeRelease(t, {
    ...RELEASE_NEXT,
    'migrations/29990103000001_documents_note.ts': `import type { Knex } from 'knex';
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table documents add column ${column} text');
}
export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table documents drop column ${column}');
}
`,
  });
}

/**
 * Runs N+2's expand migration (`attempts`: its lock attempts, the default when undefined) while
 * a 20 s read holds `documents`; resolves once the read has ended, with the attempts it took.
 */
async function migrateBehindLongRead(t: ExecutionContext, column: string, attempts?: readonly LockAttempt[]): Promise<{ retries: LockRetry[]; migrationMs: number }> {
  const release = documentsNoteRelease(t, column);
  const started = performance.now();
  const reader = await holdRead(await testDatabaseUrl(), BLOCKER_MS);
  const retries: LockRetry[] = [];
  await migrateLatest(shared.owner, { directory: path.join(release, 'migrations'), onRetry: (retry) => retries.push(retry), ...(attempts ? { attempts } : {}) });
  const migrationMs = performance.now() - started;
  await reader.released;
  await shared.owner.raw(`alter table documents drop column ${column}`);
  await shared.owner('knex_migrations').where({ name: '29990103000001_documents_note.ts' }).delete();
  return { retries, migrationMs };
}

upgradeTest('a rolling upgrade from N to N+1 through PgBouncer and HAProxy: expand, replace each instance, contract, 0 failed requests; then a migration behind a 20 s read keeps the p99 under 1 s', async (t) => {
  t.timeout(8 * 60_000, 'the rolling upgrade');
  const began = performance.now();
  await clearRows();
  const releases = { n: makeRelease(t, RELEASE_N), next: makeRelease(t, RELEASE_NEXT) };
  const fleet = await startFleet(t, releases.n);
  const { load, planned } = workload(fleet.url);
  const marks: Array<[string, number]> = [['N serves', performance.now()]];
  await sleep(PHASE_MS);

  marks.push(['expand', performance.now()]);
  const expanded = await migrateLatest(shared.owner, { directory: path.join(releases.next, 'migrations') });
  await sleep(PHASE_MS);

  marks.push(['instances replaced', performance.now()]);
  const exits: string[] = [];
  for (const name of ['one', 'two', 'three']) {
    const old = fleet.instances[name] as ServiceProcess;
    const signalled = performance.now();
    old.signal('SIGTERM');
    const exit = await old.exited;
    const exited = performance.now();
    fleet.instances[name] = await startInstance(t, releases.next, fleet.pooler, old.port);
    await servedThroughBalancer(fleet.url, name);
    exits.push(`${name} exited ${exit.code} after ${Math.round(exited - signalled)} ms, N+1 serving ${Math.round(performance.now() - exited)} ms later`);
  }

  marks.push(['contract', performance.now()]);
  const contracted = await migrateContract(shared.owner, { directory: path.join(releases.next, 'migrations') });
  await sleep(PHASE_MS);

  marks.push(['migration behind a 20 s read', performance.now()]);
  const { retries, migrationMs } = await migrateBehindLongRead(t, 'deploy_note');
  await sleep(1000);
  marks.push(['end', performance.now()]);
  const exchanges = await load.stop();

  const phases = marks.slice(0, -1).map(([name, from], index) => figures(name, exchanges, planned, from, marks[index + 1]?.[1] ?? Number.POSITIVE_INFINITY));
  for (const phase of phases) t.log(line(phase));
  t.log(exits.join('; '));
  t.log(`the migration behind the read applied after ${Math.round(migrationMs)} ms and ${retries.length + 1} attempts; the whole test ${Math.round(performance.now() - began)} ms`);

  t.deepEqual(expanded, ['29990102000001_ledger_memo.ts']);
  t.deepEqual(contracted, ['contract/29990102000002_drop_ledger_audit.ts']);
  const releasesSeen = new Set(exchanges.flatMap((exchange) => (exchange.body.includes('"release"') ? [(JSON.parse(exchange.body) as { release: string }).release] : [])));
  t.deepEqual([...releasesSeen].sort(), ['N', 'N+1'], 'both releases answered');
  t.deepEqual(
    phases.flatMap((phase) => phase.failures.slice(0, 5)),
    [],
  );
  t.true(exits.every((exit) => exit.includes('exited 0')), exits.join(', '));
  const { rows } = await shared.owner.raw("select count(*)::int as tables from pg_tables where tablename = 'ledger_audit'");
  t.is(rows[0]?.tables, 0, 'the contract migration dropped what only N used');
  // Under 1 s; on a machine so busy that the p99 of the phase before (the new release alone)
  // is over half a second already, under twice that.
  const [steady, behindRead] = [phases.at(-2)?.p99 ?? 0, phases.at(-1)?.p99 ?? 0];
  t.true(behindRead < Math.max(1000, 2 * steady), `p99 ${Math.round(behindRead)} ms behind the read, ${Math.round(steady)} ms before`);
  t.true(retries.length > 3, `${retries.length} retries`);
  t.is(retries[0]?.blockers[0]?.application, 'nightly-report');
});

// The same migration without lock_timeout, as migrations ran before: slow to watch (every
// statement on documents queued behind it for the 20 s), so only when asked for.
const unboundedTest = process.env.STRESS_UNBOUNDED_MIGRATION ? upgradeTest : test.serial.skip;
unboundedTest('for comparison: the same migration without lock_timeout queues the workload behind the read', async (t) => {
  await clearRows();
  const fleet = await startFleet(t, makeRelease(t, RELEASE_NEXT));
  await migrateContract(shared.owner, { directory: path.join(makeRelease(t, RELEASE_NEXT), 'migrations') });
  const { load, planned } = workload(fleet.url);
  await sleep(PHASE_MS);
  const from = performance.now();
  const { migrationMs } = await migrateBehindLongRead(t, 'deploy_note_unbounded', [{ lockTimeoutMs: 0, pauseMs: 0 }]);
  await sleep(1000);
  const to = performance.now();
  const exchanges = await load.stop();
  const before = figures('before', exchanges, planned, 0, from);
  const behind = figures('migration without lock_timeout behind a 20 s read', exchanges, planned, from, to);
  t.log(`${line(before)}; ${line(behind)}; the migration applied after ${Math.round(migrationMs)} ms`);
  t.pass();
});
