import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test, { type ExecutionContext } from 'ava';
import type { Knex } from 'knex';
import { QUERY_BOUNDS } from '../../lib/documents/bounds.ts';
import { clearState, fleetDatabaseForFile, scriptStep, type ScriptStep } from '../helpers/fleet-workload.ts';
import { pgbouncerBinary, startPooler } from '../helpers/pgbouncer.ts';
import { REPO_PROJECTS_DIR } from '../helpers/sample.ts';
import { testDatabaseUrl } from '../helpers/service.ts';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';
import { describeExchange, sendRequest, steadyLoad, type Exchange } from '../helpers/steady-load.ts';
import { scratchFolder } from '../helpers/scratch.ts';

/**
 * Fair share, proven (SPEC §17.6): tenant `alpha` runs every pattern that once starved the others
 * at once (transactions its clients abandon, long transactions within the limit, answers that
 * keep their transaction open, more concurrent requests than its share of the pool, the largest
 * sorts and filters the store allows), while tenant `beta` runs the fleet's normal workload
 * (logins, spaces, getOneAccount, document finds and writes). On one instance connected directly,
 * and through PgBouncer in transaction mode: `beta` gets no error, its p99 stays within 3 × its
 * p99 alone (measured before alpha starts and after it stops, so that drift in the machine's
 * other work moves both sides of the comparison), `/readyz` stays 200, and within 2 s of `alpha` stopping no connection is idle in
 * a transaction and no backend still runs a statement.
 */

const INSTANCE_POOL = 10;
/** `beta`'s workers: the odd workers of the fleet workload (test/helpers/fleet-workload.ts). */
const BETA_WORKERS = [1, 3, 5, 7];
const ALONE_MS = 8000;
const NOISY_MS = 15_000;
const SETTLE_MS = 2000;
/** The largest shapes the store allows: a `$and` of n `{field: {$ne: value}}` counts 1 + 2n conditions. */
const SORT_KEYS = QUERY_BOUNDS.sortKeys;
const FILTER_CONDITIONS = Math.floor((QUERY_BOUNDS.filterConditions - 1) / 2);
const NOISE_DOCUMENTS = 4000;

const [pgbouncer] = await Promise.all([pgbouncerBinary()]);
if ('missing' in pgbouncer && !process.env.CI) process.stderr.write(`${pgbouncer.missing}: the noisy neighbour through PgBouncer is skipped\n`);
const poolerTest = 'path' in pgbouncer || process.env.CI ? test.serial : test.serial.skip;

const fleet = fleetDatabaseForFile();
const { tokens } = fleet;

/** The sample project (getOneAccount), the fleet's `notes` and the noisy tenant's `noise` routes. */
function projectsDir(): string {
  const folder = scratchFolder('noisy-projects');
  symlinkSync(path.join(REPO_PROJECTS_DIR, 'sample'), path.join(folder, 'sample'));
  symlinkSync(path.resolve(import.meta.dirname, '../fixtures/projects/fleet/notes'), path.join(folder, 'notes'));
  symlinkSync(path.resolve(import.meta.dirname, '../fixtures/projects/noisy/noise'), path.join(folder, 'noise'));
  return folder;
}

async function startInstance(t: ExecutionContext, databaseUrl: string): Promise<ServiceProcess> {
  const unlimited = { windowMs: 60_000, max: 1_000_000 };
  return startServiceProcess(t, {
    databaseUrl,
    projectsDir: projectsDir(),
    environment: { DATABASE_DIRECT_URL: await testDatabaseUrl(), DATABASE_POOL_MAX: String(INSTANCE_POOL) },
    expert: { spaces: { enabled: true }, rateLimit: { public: unlimited, login: unlimited } },
  });
}

/** A request of the noisy tenant to its `noise` routes. */
function noise(origin: string, route: string, label: string) {
  return { label, url: `${origin}/api/noise${route}`, init: { method: 'POST', headers: { tenant: 'alpha', authorization: `Bearer ${tokens.alpha}` } } };
}

/** `beta`'s workload at a steady pace; each exchange paired with the status its script expects. */
function betaLoad(origin: string) {
  const planned = new Map<string, ScriptStep>();
  const load = steadyLoad({
    workers: BETA_WORKERS.length,
    paceMs: 20,
    next: (index, sequence) => {
      const step = scriptStep(origin, tokens, BETA_WORKERS[index] ?? 1, sequence);
      planned.set(step.label, step);
      return step;
    },
  });
  return {
    stop: async () => (await load.stop()).map((exchange) => ({ exchange, expected: planned.get(exchange.label)?.expected })),
  };
}

/** Every pattern of the noisy tenant, in loops, until `stop`. */
function alphaNoise(origin: string) {
  let stopping = false;
  const sent: Exchange[] = [];
  const loop = (request: () => ReturnType<typeof noise>, giveUpMs?: number) =>
    (async () => {
      while (!stopping) sent.push(await sendRequest(request(), giveUpMs));
    })();
  const loops = [
    // Clients that give up on a transaction that waits 20 s: the request ends, so must it.
    ...Array.from({ length: 6 }, () => loop(() => noise(origin, '/hold?ms=20000', 'abandoned transaction'), 300)),
    // Transactions of 3 s, within the handler's limit, more of them than the tenant's share.
    ...Array.from({ length: 8 }, () => loop(() => noise(origin, '/hold?ms=3000', 'long transaction'))),
    ...Array.from({ length: 2 }, () => loop(() => noise(origin, '/answer-then-hold?ms=5000', 'answered, transaction kept'))),
    ...Array.from({ length: 2 }, () => loop(() => noise(origin, `/sort?n=${SORT_KEYS}`, 'largest sort'))),
    ...Array.from({ length: 2 }, () => loop(() => noise(origin, `/filter?n=${FILTER_CONDITIONS}`, 'largest filter'))),
  ];
  return {
    sent,
    stop: async () => {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

/** `/readyz`'s statuses, polled every 200 ms until `stop`. */
function readinessWatch(origin: string) {
  const statuses = new Map<number | string, number>();
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      const { status, error } = await sendRequest({ label: 'readyz', url: `${origin}/readyz` }, 5000);
      const key = status ?? error ?? 'none';
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      await sleep(200);
    }
  })();
  return {
    stop: async () => {
      stopping = true;
      await loop;
      return statuses;
    },
  };
}

function p99(exchanges: readonly Exchange[]): number {
  const durations = exchanges.map((exchange) => exchange.endedAt - exchange.startedAt).sort((a, b) => a - b);
  return durations[Math.min(durations.length - 1, Math.floor(durations.length * 0.99))] ?? 0;
}

/** Client backends of the test database, other than this one, idle in a transaction or running a statement. */
async function busyBackends(knex: Knex): Promise<Array<{ pid: number; state: string; query: string }>> {
  const { rows } = await knex.raw(
    `select pid, state, left(query, 120) as query from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'
        and state in ('active', 'idle in transaction', 'idle in transaction (aborted)')`,
  );
  return rows;
}

async function fillNoise(origin: string): Promise<void> {
  for (let filled = 0; filled < NOISE_DOCUMENTS; filled += 500) {
    const { status } = await sendRequest(noise(origin, '/fill?n=500', 'fill'));
    if (status !== 201) throw new Error(`filling the noisy tenant's collection answered ${status}`);
  }
}

/** `beta`'s workload for `ALONE_MS` with no noise beside it, from the first step of its script. */
async function betaAlone(origin: string): ReturnType<ReturnType<typeof betaLoad>['stop']> {
  await clearState(fleet.owner);
  const alone = betaLoad(origin);
  await sleep(ALONE_MS);
  return alone.stop();
}

async function noisyNeighbour(t: ExecutionContext, origin: string, setting: string): Promise<void> {
  await clearState(fleet.owner);
  await fleet.owner('documents').where({ collection: 'noise' }).delete();
  await fillNoise(origin);

  const aloneBefore = await betaAlone(origin);

  // The script starts again from its first step: its names must be free again.
  await clearState(fleet.owner);
  const readiness = readinessWatch(origin);
  const noisy = alphaNoise(origin);
  await sleep(1000);
  const beside = betaLoad(origin);
  await sleep(NOISY_MS);
  const besideExchanges = await beside.stop();
  await noisy.stop();
  const stoppedAt = performance.now();
  const statuses = await readiness.stop();

  let busy = await busyBackends(fleet.owner);
  while (busy.length > 0 && performance.now() - stoppedAt < SETTLE_MS) {
    await sleep(100);
    busy = await busyBackends(fleet.owner);
  }
  const settledMs = performance.now() - stoppedAt;
  // Alone again, after: a machine whose other work grew or shrank meanwhile moves both sides of the comparison.
  const aloneExchanges = [...aloneBefore, ...(await betaAlone(origin))];

  const failed = (pairs: typeof aloneExchanges) => pairs.filter(({ exchange, expected }) => exchange.status !== expected).map(({ exchange }) => describeExchange(exchange));
  const [aloneP99, besideP99] = [p99(aloneExchanges.map(({ exchange }) => exchange)), p99(besideExchanges.map(({ exchange }) => exchange))];
  const alphaStatuses = new Map<string, number>();
  for (const exchange of noisy.sent) {
    const key = `${exchange.label} → ${exchange.status ?? 'client gave up'}`;
    alphaStatuses.set(key, (alphaStatuses.get(key) ?? 0) + 1);
  }
  t.log(`${setting}: beta alone (before and after alpha) ${aloneExchanges.length} requests, ${failed(aloneExchanges).length} errors, p99 ${Math.round(aloneP99)} ms`);
  t.log(`${setting}: beta beside alpha ${besideExchanges.length} requests, ${failed(besideExchanges).length} errors, p99 ${Math.round(besideP99)} ms (${(besideP99 / aloneP99).toFixed(2)} ×)`);
  t.log(`${setting}: alpha ${noisy.sent.length} requests: ${[...alphaStatuses].map(([key, count]) => `${key} ×${count}`).join(', ')}`);
  t.log(`${setting}: /readyz ${[...statuses].map(([status, count]) => `${status} ×${count}`).join(', ')}; ${busy.length} backends busy ${Math.round(settledMs)} ms after alpha stopped`);

  t.deepEqual(failed(aloneExchanges).slice(0, 5), [], 'beta alone answered as its script says');
  t.deepEqual(failed(besideExchanges).slice(0, 10), [], `${failed(besideExchanges).length} of beta's requests failed beside alpha`);
  t.true(besideP99 <= 3 * aloneP99, `beta's p99 beside alpha is ${Math.round(besideP99)} ms, over 3 × ${Math.round(aloneP99)} ms alone`);
  t.deepEqual([...statuses.keys()], [200], '/readyz answered 200 throughout');
  t.deepEqual(busy, [], `within ${SETTLE_MS} ms of alpha stopping, no backend is idle in a transaction or running a statement`);
}

test.serial('one instance: the noisy tenant leaves the other its share (0 errors, p99 within 3 ×, ready throughout, nothing left running)', async (t) => {
  t.timeout(4 * 60_000);
  const instance = await startInstance(t, await testDatabaseUrl());
  await noisyNeighbour(t, instance.url, 'one instance, direct');
});

poolerTest('through PgBouncer (transaction mode): the same', async (t) => {
  t.timeout(4 * 60_000);
  if (!('path' in pgbouncer)) throw new Error(pgbouncer.missing);
  const pooler = await startPooler(t, { binary: pgbouncer.path, serverUrl: await testDatabaseUrl(), poolSize: INSTANCE_POOL + 2 });
  const instance = await startInstance(t, pooler.url);
  await noisyNeighbour(t, instance.url, 'through PgBouncer');
});
