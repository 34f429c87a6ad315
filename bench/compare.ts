import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { seedAccounts } from './harness/accounts.ts';
import { openScratchDatabase } from './harness/database.ts';
import { measure, type LoadTarget } from './harness/load.ts';
import { runToTheEnd, type Cleanups } from './harness/lifetime.ts';
import { startChildServer, type ChildServer } from './harness/processes.ts';
import { serviceProjects } from './harness/projects.ts';
import { checkOutRevision, describeThisTree } from './harness/revision.ts';
import { serviceProcess, serviceSetup, type ServiceSetup } from './harness/service.ts';
import { benchSettings, type BenchSettings } from './harness/settings.ts';
import { getOneAccount, heartbeat } from './scenarios/requests.ts';

/**
 * `make bench-compare BASE=<revision>`: is this tree's service cheaper per request than BASE's? A change of a few
 * microseconds is below what one `make bench` run can tell (the same code gives 168 to 287 µs a getOneAccount from
 * run to run). So both run side by side on one scratch database, several processes each, and take the same requests
 * in turn, round after round, the order turning; each round's difference of CPU time per request (this tree's
 * processes' mean − BASE's) is untouched by a drift of the machine's speed between rounds, and their median is the
 * figure. The projects and the database are this tree's for both.
 */
const NAME_THE_BASE = 'name the revision to compare with: make bench-compare BASE=<revision>';
const environment = z.object({
  BASE: z.string(NAME_THE_BASE).min(1, NAME_THE_BASE),
  COMPARE_TARGET: z.enum(['account', 'heartbeat']).default('account'),
  COMPARE_ROUNDS: z.coerce.number().int().min(2).max(200).default(30),
  COMPARE_PROCESSES: z.coerce.number().int().min(1).max(4).default(2),
  COMPARE_SECONDS: z.coerce.number().positive().max(30).default(1),
  COMPARE_WARMUP_SECONDS: z.coerce.number().min(0).max(30).default(0.3),
  COMPARE_ACCOUNTS: z.coerce.number().int().positive().default(20_000),
  COMPARE_PIN: z.enum(['0', '1']).default('0'),
});
type CompareSettings = z.infer<typeof environment>;

const THIS_TREE = path.resolve(import.meta.dirname, '../lib/main.ts');

interface Side {
  readonly label: string;
  /** Its `lib/main.ts`. */
  readonly script: string;
  readonly servers: ChildServer[];
}

async function main(cleanups: Cleanups): Promise<void> {
  const parsed = environment.safeParse(process.env);
  if (!parsed.success) throw new Error(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '));
  const settings = parsed.data;
  const base = checkOutRevision(settings.BASE);
  cleanups.add(() => base.remove());
  const root = mkdtempSync(path.join(tmpdir(), 'spaceport-compare-run-'));
  cleanups.add(() => rmSync(root, { recursive: true, force: true }));
  const database = await openScratchDatabase();
  cleanups.add(() => database.drop());
  process.stderr.write(`bench-compare: ${settings.BASE} (${base.commit}) checked out in ${base.root}; scratch database ${database.name}\n`);
  const usernames = settings.COMPARE_TARGET === 'account' ? await seedAccounts(database.url, settings.COMPARE_ACCOUNTS) : [];
  const sides: Side[] = [
    { label: `base ${base.commit}`, script: path.join(base.root, 'lib/main.ts'), servers: [] },
    { label: `this tree ${describeThisTree()}`, script: THIS_TREE, servers: [] },
  ];
  await startServices(sides, serviceSetup(database.url, root), serviceProjects(root), settings.COMPARE_PROCESSES, cleanups);
  if (settings.COMPARE_PIN === '1') pin(sides.flatMap((side) => side.servers));
  const target = (server: ChildServer): LoadTarget => (settings.COMPARE_TARGET === 'account' ? getOneAccount(server.origin, usernames) : heartbeat(server.origin));
  const load = benchSettings({ ...process.env, BENCH_SECONDS: String(settings.COMPARE_SECONDS), BENCH_WARMUP_SECONDS: String(settings.COMPARE_WARMUP_SECONDS) });
  const rounds = await measureRounds(sides, target, settings, load);
  process.stdout.write(`${report(sides, rounds, settings)}\n`);
}

/** `count` services of each side, started in turn (one of each, then the next of each), on the same projects and database. */
async function startServices(sides: readonly Side[], setup: ServiceSetup, projectsDir: string, count: number, cleanups: Cleanups): Promise<void> {
  for (let copy = 1; copy <= count; copy += 1) {
    for (const side of sides) {
      const options = serviceProcess(setup, `${side.label} ${copy}`, projectsDir, 'sample');
      const server = await startChildServer({ ...options, name: `${side.label}, process ${copy}`, script: side.script });
      cleanups.add(() => server.stop());
      if (server.cpuMicroseconds() === undefined) throw new Error('the CPU time of a process cannot be read here (no /proc): nothing to compare');
      side.servers.push(server);
    }
  }
}

/** Per round and side: the mean CPU µs per request of its processes, and their mean req/s; and each process's CPU µs per request. */
interface Round {
  readonly cpu: readonly number[];
  readonly requestsPerSecond: readonly number[];
  readonly perServer: ReadonlyMap<ChildServer, number>;
}

async function measureRounds(sides: readonly Side[], target: (server: ChildServer) => LoadTarget, settings: CompareSettings, load: BenchSettings): Promise<Round[]> {
  const rounds: Round[] = [];
  const interleaved = sides[0]?.servers.flatMap((server, index) => [server, sides[1]?.servers[index]]).filter((server) => server !== undefined) ?? [];
  for (let round = 0; round < settings.COMPARE_ROUNDS; round += 1) {
    const order = round % 2 === 0 ? interleaved : [...interleaved].reverse();
    const perServer = new Map<ChildServer, number>();
    const throughput = new Map<ChildServer, number>();
    for (const server of order) {
      const measured = await measure(target(server), load, server);
      if (measured.failures > 0) throw new Error(`${server.name}: ${measured.failures} failed requests in round ${round + 1}`);
      perServer.set(server, measured.cpuMicrosecondsPerRequest ?? Number.NaN);
      throughput.set(server, measured.requestsPerSecond);
    }
    const mean = (side: Side, of: Map<ChildServer, number>) => side.servers.reduce((sum, server) => sum + (of.get(server) ?? Number.NaN), 0) / side.servers.length;
    rounds.push({ cpu: sides.map((side) => mean(side, perServer)), requestsPerSecond: sides.map((side) => mean(side, throughput)), perServer });
    process.stderr.write(`bench-compare: round ${round + 1} of ${settings.COMPARE_ROUNDS}: ${sides.map((side, index) => `${side.label} ${rounds.at(-1)?.cpu[index]?.toFixed(1)}`).join(', ')} µs of CPU a request\n`);
  }
  return rounds;
}

function report(sides: readonly Side[], rounds: readonly Round[], settings: CompareSettings): string {
  const what = settings.COMPARE_TARGET === 'account' ? 'POST /api/sample/getOneAccount' : 'GET /api/sample/heartbeat';
  const differences = rounds.map((round) => (round.cpu[1] ?? Number.NaN) - (round.cpu[0] ?? Number.NaN));
  const [low, middle, high] = [0.25, 0.5, 0.75].map((share) => quantile(differences, share).toFixed(1));
  const width = Math.max(...sides.map((side) => side.label.length));
  return [
    `bench-compare: ${what}, ${rounds.length} rounds of ${settings.COMPARE_SECONDS} s (after ${settings.COMPARE_WARMUP_SECONDS} s of warm-up), ${settings.COMPARE_PROCESSES} process(es) a side${settings.COMPARE_PIN === '1' ? ', servers on core 0 and the load generator on core 1' : ''}`,
    '',
    `${'side'.padEnd(width)}  CPU µs/req (median round)  req/s (median round)  CPU µs/req by process (median)`,
    ...sides.map((side, index) => {
      const cpu = quantile(rounds.map((round) => round.cpu[index] ?? Number.NaN), 0.5).toFixed(1);
      const throughput = Math.round(quantile(rounds.map((round) => round.requestsPerSecond[index] ?? Number.NaN), 0.5)).toLocaleString('en-US');
      const byProcess = side.servers.map((server) => quantile(rounds.map((round) => round.perServer.get(server) ?? Number.NaN), 0.5).toFixed(1)).join(', ');
      return `${side.label.padEnd(width)}  ${cpu.padStart(25)}  ${throughput.padStart(20)}  ${byProcess}`;
    }),
    '',
    `paired difference (this tree − base), CPU µs per request: median ${middle}, middle half ${low} to ${high}`,
    'Two processes of the same code differ too (where V8 lays out their code and heap): BASE=HEAD on a clean tree shows how much.',
  ].join('\n');
}

/** The nearest-rank quantile. */
function quantile(values: readonly number[], share: number): number {
  const sorted = [...values].sort((one, other) => one - other);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))] ?? Number.NaN;
}

/** Every server on core 0, this process (the load generator) on core 1: the two no longer take each other's core. */
function pin(servers: readonly ChildServer[]): void {
  for (const server of servers) execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', '0', String(server.pid)], { stdio: 'ignore' });
  execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', '1', String(process.pid)], { stdio: 'ignore' });
}

runToTheEnd('bench-compare', main);
