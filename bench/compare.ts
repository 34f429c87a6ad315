import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { seedAccounts } from './harness/accounts.ts';
import { openScratchDatabase } from './harness/database.ts';
import { runToTheEnd, type Cleanups } from './harness/lifetime.ts';
import { measure, percentile, type LoadTarget } from './harness/load.ts';
import { startChildServer, type ChildServer } from './harness/processes.ts';
import { serviceProjects } from './harness/projects.ts';
import { checkOutRevision, describeThisTree } from './harness/revision.ts';
import { serviceProcess, serviceSetup, type ServiceSetup } from './harness/service.ts';
import { benchSettings, type BenchSettings } from './harness/settings.ts';
import { TokenSupply } from './harness/tokens.ts';
import { fixtureRouteWithFreshTokens, getOneAccount, heartbeat } from './scenarios/requests.ts';

/**
 * `make bench-compare BASE=<revision>`: does this tree's service spend less CPU per request than BASE's? A change of
 * a few microseconds is below what one `make bench` run can tell (the same code gives 168 to 287 µs a getOneAccount
 * from run to run). So both run side by side on one scratch database and take the same requests in turn, round after
 * round, the order turning; each round's difference (this tree's processes' mean − BASE's) is untouched by a drift
 * of the machine's speed between rounds. Two processes of the same code differ by up to a tenth (where V8 lays out
 * their code and heap), for as long as they run: every few rounds both sides get fresh ones, so that the median of
 * the differences is over many processes, not a lucky few. The projects and the database are this tree's for both.
 */
const NAME_THE_BASE = 'name the revision to compare with: make bench-compare BASE=<revision>';
const environment = z.object({
  BASE: z.string(NAME_THE_BASE).min(1, NAME_THE_BASE),
  COMPARE_TARGET: z.enum(['account', 'heartbeat', 'new-token']).default('account'),
  COMPARE_ROUNDS: z.coerce.number().int().min(2).max(200).default(30),
  COMPARE_ROUNDS_PER_START: z.coerce.number().int().min(1).max(200).default(5),
  COMPARE_PROCESSES: z.coerce.number().int().min(1).max(4).default(2),
  COMPARE_SECONDS: z.coerce.number().min(0.1).max(30).default(1),
  COMPARE_WARMUP_SECONDS: z.coerce.number().min(0).max(30).default(0.3),
  COMPARE_START_WARMUP_SECONDS: z.coerce.number().min(0).max(60).default(2),
  COMPARE_ACCOUNTS: z.coerce.number().int().positive().default(20_000),
  // Shared by every process of a run: each sees over 10 000 others before one comes back, more than the service remembers.
  COMPARE_TOKENS: z.coerce.number().int().min(50_000).default(100_000),
  COMPARE_PIN: z.enum(['0', '1']).default('0'),
});
type CompareSettings = z.infer<typeof environment>;

/** What the report calls each COMPARE_TARGET. */
const TARGET_NAMES: Record<CompareSettings['COMPARE_TARGET'], string> = {
  account: 'POST /api/sample/getOneAccount',
  heartbeat: 'GET /api/sample/heartbeat',
  'new-token': 'GET /api/benchmark/private with a system JWT not sent in the last COMPARE_TOKENS requests',
};

const THIS_TREE = path.resolve(import.meta.dirname, '../lib/main.ts');

interface Side {
  readonly label: string;
  /** Its `lib/main.ts`. */
  readonly script: string;
  /** Node's compile cache for its processes: BASE's paths would only fill this tree's. */
  readonly compileCache?: string;
}

/** What every process of a run shares. */
interface Services {
  readonly sides: readonly Side[];
  readonly setup: ServiceSetup;
  readonly projectsDir: string;
}

async function main(cleanups: Cleanups): Promise<void> {
  const settings = compareSettings();
  const load = benchSettings({ ...process.env, BENCH_SECONDS: String(settings.COMPARE_SECONDS), BENCH_WARMUP_SECONDS: String(settings.COMPARE_WARMUP_SECONDS) });
  const warmUp = benchSettings({ ...process.env, BENCH_SECONDS: String(settings.COMPARE_START_WARMUP_SECONDS || 1), BENCH_WARMUP_SECONDS: '0' });
  const base = checkOutRevision(settings.BASE);
  cleanups.add(() => base.remove());
  const root = mkdtempSync(path.join(tmpdir(), 'spaceport-compare-run-'));
  cleanups.add(() => rmSync(root, { recursive: true, force: true }));
  // Dropped even when the run is interrupted while the database is being made.
  const opening = openScratchDatabase();
  cleanups.add(async () => (await opening.catch(() => undefined))?.drop());
  const database = await opening;
  process.stderr.write(`bench-compare: ${settings.BASE} (${base.commit}) checked out in ${base.root}; scratch database ${database.name}\n`);
  const services: Services = {
    sides: [
      { label: `base ${base.commit}`, script: path.join(base.root, 'lib/main.ts'), compileCache: path.join(root, 'compile-cache') },
      { label: `this tree ${describeThisTree()}`, script: THIS_TREE },
    ],
    setup: serviceSetup(database.url, root),
    projectsDir: serviceProjects(root),
  };
  const target = await targetOf(settings, database.url, services.setup);
  const rounds: Round[] = [];
  while (rounds.length < settings.COMPARE_ROUNDS) {
    const started = await startServices(services, settings, cleanups);
    try {
      if (settings.COMPARE_START_WARMUP_SECONDS > 0) for (const server of started.flat()) await measured(server, () => measure(target(server), warmUp, server));
      const count = Math.min(settings.COMPARE_ROUNDS_PER_START, settings.COMPARE_ROUNDS - rounds.length);
      for (let round = 0; round < count; round += 1) rounds.push(await measureRound(started, target, load, rounds.length, settings));
    } finally {
      await Promise.all(started.flat().map((server) => server.stop()));
    }
  }
  process.stdout.write(`${report(services.sides, rounds, settings)}\n`);
}

/** The requests of COMPARE_TARGET, for either side's server; what they need is made once, for both. */
async function targetOf(settings: CompareSettings, databaseUrl: string, setup: ServiceSetup): Promise<(server: ChildServer) => LoadTarget> {
  switch (settings.COMPARE_TARGET) {
    case 'account': {
      const usernames = await seedAccounts(databaseUrl, settings.COMPARE_ACCOUNTS);
      return (server) => getOneAccount(server.origin, usernames);
    }
    case 'heartbeat':
      return (server) => heartbeat(server.origin);
    case 'new-token': {
      const supply = new TokenSupply(setup, settings.COMPARE_TOKENS, 'reuse');
      return (server) => fixtureRouteWithFreshTokens(server.origin, supply);
    }
  }
}

function compareSettings(): CompareSettings {
  const parsed = environment.safeParse(process.env);
  if (!parsed.success) throw new Error(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '));
  return parsed.data;
}

/** `COMPARE_PROCESSES` fresh services of each side, started in turn (one of each, then the next of each); by side. */
async function startServices({ sides, setup, projectsDir }: Services, settings: CompareSettings, cleanups: Cleanups): Promise<ChildServer[][]> {
  const started: ChildServer[][] = sides.map(() => []);
  for (let copy = 1; copy <= settings.COMPARE_PROCESSES; copy += 1) {
    for (const [index, side] of sides.entries()) {
      const options = serviceProcess(setup, `${side.label} ${copy}`, projectsDir, 'sample');
      const env = side.compileCache === undefined ? options.env : { ...options.env, NODE_COMPILE_CACHE: side.compileCache };
      const server = await startChildServer({ ...options, env, name: `${side.label}, process ${copy}`, script: side.script });
      cleanups.add(() => server.stop());
      if (server.cpuMicroseconds() === undefined) throw new Error('the CPU time of a process cannot be read here (no /proc): nothing to compare');
      started[index]?.push(server);
    }
  }
  if (settings.COMPARE_PIN === '1') pin(started.flat());
  return started;
}

/** One round: by side, the mean CPU µs per request of its processes and their mean req/s; and each process's. */
interface Round {
  readonly cpu: readonly number[];
  readonly requestsPerSecond: readonly number[];
  /** CPU µs per request, by side, process by process. */
  readonly byProcess: readonly (readonly number[])[];
}

async function measureRound(servers: ChildServer[][], target: (server: ChildServer) => LoadTarget, load: BenchSettings, done: number, settings: CompareSettings): Promise<Round> {
  const interleaved = (servers[0] ?? []).flatMap((server, index) => [server, servers[1]?.[index]]).filter((server) => server !== undefined);
  const cpu = new Map<ChildServer, number>();
  const throughput = new Map<ChildServer, number>();
  for (const server of done % 2 === 0 ? interleaved : interleaved.reverse()) {
    const run = await measured(server, () => measure(target(server), load, server));
    cpu.set(server, run.cpuMicrosecondsPerRequest ?? Number.NaN);
    throughput.set(server, run.requestsPerSecond);
  }
  const mean = (side: readonly ChildServer[], of: Map<ChildServer, number>) => side.reduce((sum, server) => sum + (of.get(server) ?? Number.NaN), 0) / side.length;
  const round = { cpu: servers.map((side) => mean(side, cpu)), requestsPerSecond: servers.map((side) => mean(side, throughput)), byProcess: servers.map((side) => side.map((server) => cpu.get(server) ?? Number.NaN)) };
  process.stderr.write(`bench-compare: round ${done + 1} of ${settings.COMPARE_ROUNDS}: ${round.cpu.map((value, index) => `${index === 0 ? 'base' : 'this tree'} ${value.toFixed(1)}`).join(', ')} µs of CPU a request\n`);
  return round;
}

/** A measurement of `server`, whose failure names it. */
async function measured<Result extends { readonly failures: number }>(server: ChildServer, run: () => Promise<Result>): Promise<Result> {
  let result: Result;
  try {
    result = await run();
  } catch (error) {
    throw new Error(`${server.name}: ${(error as Error).message}`);
  }
  if (result.failures > 0) throw new Error(`${server.name}: ${result.failures} failed requests`);
  return result;
}

function report(sides: readonly Side[], rounds: readonly Round[], settings: CompareSettings): string {
  const what = TARGET_NAMES[settings.COMPARE_TARGET];
  const starts = Math.ceil(rounds.length / settings.COMPARE_ROUNDS_PER_START);
  const differences = rounds.map((round) => (round.cpu[1] ?? Number.NaN) - (round.cpu[0] ?? Number.NaN));
  const width = Math.max(...sides.map((side) => side.label.length));
  return [
    `bench-compare: ${what}, ${rounds.length} rounds of ${settings.COMPARE_SECONDS} s (after ${settings.COMPARE_WARMUP_SECONDS} s of warm-up), ${settings.COMPARE_PROCESSES} process(es) a side started afresh every ${settings.COMPARE_ROUNDS_PER_START} rounds (${starts * settings.COMPARE_PROCESSES} a side in all)${settings.COMPARE_PIN === '1' ? ', servers on core 0 and the load generator on core 1' : ''}`,
    '',
    `${'side'.padEnd(width)}  CPU µs/req (median round)  req/s (median round)  CPU µs/req of its processes (lowest to highest median)`,
    ...sides.map((side, index) => {
      const cpu = median(rounds.map((round) => round.cpu[index] ?? Number.NaN)).toFixed(1);
      const throughput = Math.round(median(rounds.map((round) => round.requestsPerSecond[index] ?? Number.NaN))).toLocaleString('en-US');
      return `${side.label.padEnd(width)}  ${cpu.padStart(25)}  ${throughput.padStart(20)}  ${processSpread(rounds, index, settings.COMPARE_ROUNDS_PER_START)}`;
    }),
    '',
    `paired difference (this tree − base), CPU µs per request of the service's process: median ${median(differences).toFixed(1)}, middle half ${(percentile(differences, 0.25) ?? Number.NaN).toFixed(1)} to ${(percentile(differences, 0.75) ?? Number.NaN).toFixed(1)}`,
    'BASE=HEAD on a clean tree (the same code on both sides) shows how far from 0 a run of these settings lands by chance.',
  ].join('\n');
}

/** The lowest and the highest of its processes' medians: each process serves the rounds of one start. */
function processSpread(rounds: readonly Round[], side: number, roundsPerStart: number): string {
  const medians: number[] = [];
  for (let first = 0; first < rounds.length; first += roundsPerStart) {
    const started = rounds.slice(first, first + roundsPerStart);
    const processes = started[0]?.byProcess[side]?.length ?? 0;
    for (let index = 0; index < processes; index += 1) medians.push(median(started.map((round) => round.byProcess[side]?.[index] ?? Number.NaN)));
  }
  return `${Math.min(...medians).toFixed(1)} to ${Math.max(...medians).toFixed(1)}`;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((one, other) => one - other);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2;
}

/** Every server on core 0, this process (the load generator) on core 1: the two no longer take each other's core. */
function pin(servers: readonly ChildServer[]): void {
  const onCore = (core: string, pid: number) => {
    try {
      execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', core, String(pid)], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    } catch (error) {
      const reason = (error as { stderr?: string }).stderr?.trim() || (error as Error).message;
      throw new Error(`COMPARE_PIN=1 needs taskset and two cores: ${reason}`);
    }
  };
  for (const server of servers) onCore('0', server.pid);
  onCore('1', process.pid);
}

runToTheEnd('bench-compare', main);
