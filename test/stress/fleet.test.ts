import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import test, { type ExecutionContext } from 'ava';
import {
  clearState,
  comparableBody,
  crossedRows,
  expectedState,
  type FleetState,
  leaks,
  fleetDatabaseForFile,
  scriptStep,
  type ScriptStep,
  STEPS_PER_ROUND,
  storedState,
  workerScript,
} from '../helpers/fleet-workload.ts';
import { haproxyBinary, startBalancer, type Balancer } from '../helpers/haproxy.ts';
import { pgbouncerBinary, startPooler } from '../helpers/pgbouncer.ts';
import { REDIS_URL, testWithRedis } from '../helpers/redis.ts';
import { REPO_PROJECTS_DIR } from '../helpers/sample.ts';
import { testDatabaseUrl } from '../helpers/service.ts';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';
import { describeExchange, sendRequest, steadyLoad, stopUnderLoad, type Exchange } from '../helpers/steady-load.ts';
import { scratchFolder } from '../helpers/scratch.ts';

/**
 * A fleet on one machine (SPEC §15.3): PgBouncer in transaction mode with a server pool smaller
 * than each instance's own pool, three instances behind HAProxy sharing Redis, and the
 * two-tenant workload of test/helpers/fleet-workload.ts across them. The answers are those of the
 * same workload on one instance connected directly, with no error and no leak, and an instance
 * stopped with SIGTERM under that load loses nothing at the balancer.
 */

/** Server connections PgBouncer keeps to the database: fewer than one instance's pool alone. */
const SERVER_POOL = 4;
/** Each instance's pool (`DATABASE_POOL_MAX`; 10 is also the service's default). */
const INSTANCE_POOL = 10;
const WORKERS = 12;
const ROUNDS = 12;
const EXIT_LIMIT_MS = 10_000;
const UNLIMITED = { windowMs: 60_000, max: 1_000_000 };

// Decided before any test is declared: ava takes declarations only until the file first waits.
const withRedis = await testWithRedis();
const [haproxy, pgbouncer] = await Promise.all([haproxyBinary(), pgbouncerBinary()]);
const missing = [haproxy, pgbouncer].flatMap((binary) => ('missing' in binary ? [binary.missing] : []));
if (missing.length > 0 && !process.env.CI) process.stderr.write(`${missing.join('; ')}: the fleet tests are skipped\n`);
const fleetTest = missing.length === 0 || process.env.CI ? withRedis : test.serial.skip;

/** A system JWT of each tenant's admin. */
const shared = fleetDatabaseForFile();
const { tokens } = shared;

/** The sample project (getOneAccount) and the fleet fixture's `notes` project (document operations). */
function projectsDir(): string {
  const folder = scratchFolder('fleet-projects');
  symlinkSync(path.join(REPO_PROJECTS_DIR, 'sample'), path.join(folder, 'sample'));
  symlinkSync(path.resolve(import.meta.dirname, '../fixtures/projects/fleet/notes'), path.join(folder, 'notes'));
  return folder;
}

/**
 * The instances, started at once as a deployment would start them: each migrates at start-up,
 * over DATABASE_DIRECT_URL (a session of its own for the migration lock), and serves through the
 * pooler.
 */
async function startInstances(t: ExecutionContext, names: readonly string[], databaseUrl: string): Promise<Record<string, ServiceProcess>> {
  const direct = await testDatabaseUrl();
  const options = {
    databaseUrl,
    redisUrl: REDIS_URL,
    projectsDir: projectsDir(),
    environment: { DATABASE_DIRECT_URL: direct, DATABASE_POOL_MAX: String(INSTANCE_POOL) },
    expert: { spaces: { enabled: true }, http: { trustProxy: true }, rateLimit: { public: UNLIMITED, login: UNLIMITED } },
  };
  const started = await Promise.all(names.map(async (name) => [name, await startServiceProcess(t, options)] as const));
  return Object.fromEntries(started);
}

interface Fleet {
  instances: Record<string, ServiceProcess>;
  balancer: Balancer;
}

async function startFleet(t: ExecutionContext): Promise<Fleet> {
  if (!('path' in haproxy)) throw new Error(haproxy.missing);
  if (!('path' in pgbouncer)) throw new Error(pgbouncer.missing);
  const pooler = await startPooler(t, { binary: pgbouncer.path, serverUrl: await testDatabaseUrl(), poolSize: SERVER_POOL });
  const instances = await startInstances(t, ['one', 'two', 'three'], pooler.url);
  const balancer = await startBalancer(t, haproxy.path, Object.fromEntries(Object.entries(instances).map(([name, instance]) => [name, instance.port])));
  return { instances, balancer };
}

interface Run {
  /** Each worker's exchanges, in its order. */
  exchanges: Exchange[][];
  steps: ScriptStep[][];
  durationMs: number;
}

/** Every worker runs its script, one request at a time, all workers at once. */
async function runWorkload(origin: string): Promise<Run> {
  const steps = Array.from({ length: WORKERS }, (_, worker) => workerScript(origin, tokens, worker, ROUNDS * STEPS_PER_ROUND));
  const started = performance.now();
  const exchanges = await Promise.all(
    steps.map(async (script) => {
      const answered: Exchange[] = [];
      for (const step of script) answered.push(await sendRequest(step));
      return answered;
    }),
  );
  return { exchanges, steps, durationMs: performance.now() - started };
}

interface Tally {
  requests: number;
  errors: Exchange[];
  leaks: Exchange[];
}

function tally(pairs: Array<[Exchange, ScriptStep]>): Tally {
  return {
    requests: pairs.length,
    errors: pairs.filter(([exchange, step]) => exchange.status !== step.expected).map(([exchange]) => exchange),
    leaks: pairs.filter(([exchange, step]) => leaks(exchange, step.tenant)).map(([exchange]) => exchange),
  };
}

function pairsOf(run: Run): Array<[Exchange, ScriptStep]> {
  return run.exchanges.flatMap((answers, worker) => answers.map((exchange, index): [Exchange, ScriptStep] => [exchange, run.steps[worker]?.[index] as ScriptStep]));
}

/** What a comparison shows of an answer: its status, and its body where the script decides it. */
function answerOf(exchange: Exchange, step: ScriptStep): unknown {
  return { request: step.label, status: exchange.status, body: step.comparable ? comparableBody(exchange.body) : '<depends on other workers>' };
}

function summary(name: string, figures: Tally, durationMs: number): string {
  const rate = Math.round((figures.requests / durationMs) * 1000);
  return `${name}: ${figures.requests} requests in ${Math.round(durationMs)} ms (${rate}/s), ${figures.errors.length} errors, ${figures.leaks.length} leaks${breakdown(figures.errors)}`;
}

/** The most frequent failures, by request and answer: `POST /spaces → 500 …: 180`. */
function breakdown(errors: readonly Exchange[]): string {
  const counts = new Map<string, number>();
  for (const exchange of errors) {
    const request = exchange.label.replace(/^w\d+ #\d+ /, '').replace(/(alpha|beta)-w\d+-r\d+/, ':name').replace(/worker=\d+/, 'worker=:w');
    const answer = `${request} → ${exchange.status ?? exchange.error} ${exchange.body.slice(0, 60)}`;
    counts.set(answer, (counts.get(answer) ?? 0) + 1);
  }
  const ranked = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 8);
  return ranked.length === 0 ? '' : `; most frequent: ${ranked.map(([answer, count]) => `${answer}: ${count}`).join('; ')}`;
}

const rowCount = (state: FleetState) => `${state.spaces.length} spaces, ${state.notes.length} notes`;

fleetTest('three instances through PgBouncer (transaction mode) answer exactly as one instance on a direct connection: 0 errors, 0 leaks', async (t) => {
  const fleet = await startFleet(t);
  const { reference } = await startInstances(t, ['reference'], await testDatabaseUrl());
  if (reference === undefined) throw new Error('no reference instance');

  await clearState(shared.owner);
  const direct = await runWorkload(reference.url);
  const directState = await storedState(shared.owner);
  await clearState(shared.owner);
  const pooled = await runWorkload(fleet.balancer.url);
  const pooledState = await storedState(shared.owner);

  const [directPairs, pooledPairs] = [pairsOf(direct), pairsOf(pooled)];
  const [directFigures, pooledFigures] = [tally(directPairs), tally(pooledPairs)];
  const differing = pooledPairs.flatMap(([exchange, step], index) => {
    const [directExchange, directStep] = directPairs[index] ?? [];
    const [mine, theirs] = [answerOf(exchange, step), directExchange && directStep && answerOf(directExchange, directStep)];
    return isDeepStrictEqual(mine, theirs) ? [] : [{ pooled: mine, direct: theirs }];
  });
  const expected = expectedState(new Map(pooled.exchanges.map((answers, worker) => [worker, answers.length])));
  t.log(summary('direct, one instance', directFigures, direct.durationMs));
  t.log(summary(`through PgBouncer (server pool ${SERVER_POOL}), 3 instances (pools of ${INSTANCE_POOL}) behind HAProxy, ${WORKERS} workers`, pooledFigures, pooled.durationMs));
  t.log(`${differing.length} of ${pooledFigures.requests} answers differ from the direct connection's`);
  t.log(`rows left: ${rowCount(pooledState)} through the pooler; ${rowCount(directState)} direct; ${rowCount(expected)} by the script; ${crossedRows(pooledState).length} crossed tenants`);

  t.deepEqual(directFigures.errors.slice(0, 10).map((exchange) => describeExchange(exchange)), [], 'the direct reference itself answered as the script says');
  t.deepEqual(pooledFigures.errors.slice(0, 10).map((exchange) => describeExchange(exchange)), [], `${pooledFigures.errors.length} errors through the pooler`);
  t.deepEqual(pooledFigures.leaks.slice(0, 10).map((exchange) => describeExchange(exchange)), [], `${pooledFigures.leaks.length} answers showed the other tenant's names`);
  t.deepEqual(differing.slice(0, 5), [], 'every answer as through a direct connection');
  t.deepEqual(pooledState, directState, 'the rows left are those the direct connection left');
  t.deepEqual(pooledState, expected, "the rows left are those the script's answers say");
  t.deepEqual(crossedRows(pooledState), [], "no row stored under one tenant with the other's name");
  const served = new Set(pooled.exchanges.flat().map((exchange) => exchange.headers?.get('x-served-by')));
  t.deepEqual([...served].sort(), ['one', 'three', 'two'], 'all three instances answered');
});

fleetTest('through PgBouncer, stopping one of three instances with SIGTERM under the workload loses no request at the balancer', async (t) => {
  const { instances, balancer } = await startFleet(t);
  const { one, two, three } = instances;
  if (one === undefined || two === undefined || three === undefined) throw new Error('missing instances');
  await clearState(shared.owner);
  const planned = new Map<string, ScriptStep>();
  const load = steadyLoad({
    workers: WORKERS,
    paceMs: 0,
    next: (worker, sequence) => {
      const step = scriptStep(balancer.url, tokens, worker, sequence);
      planned.set(step.label, step);
      return step;
    },
  });
  const started = performance.now();
  const { exchanges, signalled, exit, exitMs } = await stopUnderLoad(load, one, 3000, 2000);
  const durationMs = performance.now() - started;

  const pairs = exchanges.map((exchange): [Exchange, ScriptStep] => [exchange, planned.get(exchange.label) as ScriptStep]);
  const figures = tally(pairs);
  const done = new Map<number, number>();
  for (const [, step] of pairs) done.set(step.worker, (done.get(step.worker) ?? 0) + 1);
  const [stored, expected] = [await storedState(shared.owner), expectedState(done)];
  t.log(`rows left: ${rowCount(stored)}; ${rowCount(expected)} by the script's answers; ${crossedRows(stored).length} crossed tenants`);
  t.log(summary(`through PgBouncer, 3 instances behind HAProxy, one stopped with SIGTERM after 3 s (exited ${exit.code ?? exit.signal} ${Math.round(exitMs)} ms later)`, figures, durationMs));
  t.deepEqual(figures.errors.slice(0, 10).map((exchange) => describeExchange(exchange, signalled)), [], `${figures.errors.length} requests failed at the balancer`);
  t.deepEqual(figures.leaks.slice(0, 10).map((exchange) => describeExchange(exchange, signalled)), [], `${figures.leaks.length} answers showed the other tenant's names`);

  t.deepEqual(stored, expected, 'every answered write is stored, once, and nothing else');
  t.deepEqual(crossedRows(stored), [], "no row stored under one tenant with the other's name");
  const servedBy = (from: number, to: number) => [...new Set(exchanges.filter((exchange) => exchange.startedAt >= from && exchange.endedAt < to).map((exchange) => exchange.headers?.get('x-served-by')))].sort();
  t.deepEqual(servedBy(0, signalled), ['one', 'three', 'two'], 'all three served before the signal');
  t.deepEqual(servedBy(signalled + exitMs, Number.POSITIVE_INFINITY), ['three', 'two'], 'the other two serve everything after');
  t.is(exit.code, 0);
  t.true(exitMs < EXIT_LIMIT_MS, `exited ${Math.round(exitMs)} ms after SIGTERM`);
  t.true(two.running() && three.running());
});
