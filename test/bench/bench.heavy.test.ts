import test from 'ava';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { databaseExists, serverUrl } from '../helpers/database.ts';

/**
 * `make bench` is a measurement, not a timed test: these runs only prove that the harness
 * starts every server, gets correct answers from each, prints its table and cleans up.
 */
const REPOSITORY = path.resolve(import.meta.dirname, '../..');

/** Small enough to finish in seconds; the figures it prints mean nothing. */
const TINY_RUN = {
  BENCH_SECONDS: '0.3',
  BENCH_WARMUP_SECONDS: '0',
  BENCH_CONNECTIONS: '2',
  BENCH_ACCOUNTS: '300',
  BENCH_PROJECTS: '3',
  BENCH_ROUTES_PER_PROJECT: '2',
  BENCH_MEMORY_REQUESTS: '300',
  BENCH_DOCUMENTS: '2000',
};

/** The targets as the tiny run words them (3 projects, 150 requests in the second half). */
const ISSUE_13_TARGETS = [
  'req/s ≥ 1.00 × bare Koa + same middleware',
  'req/s ≥ 0.40 × node:http',
  'req/s ≥ 2.00 × Express 5',
  'metrics on: req/s ≥ 0.97 × spaceport (whole chain)',
  'tracing on: req/s ≥ 0.80 × spaceport (whole chain)',
  'req/s ≥ 1.00 × spaceport, public',
  'req/s ≥ 0.80 × spaceport, public (driven alike)',
  'req/s ≥ 0.75 × bare pg pool',
  "p99 ≤ 2.00 × bare pg pool's",
  "CPU per request ≤ 1.60 × bare pg pool's",
  'req/s ≥ 0.90 × spaceport, 1 project × 2 routes',
  'start-up with 3 projects < 2,000 ms',
  'RSS growth over the second 150 requests < 3 %',
  'req/s ≥ 0.90 × spaceport, direct connection',
  // Item 7 (its p99 target is worded as item 3's, above).
  'req/s ≥ 0.70 × bare pg pool',
  "p99 ≤ 3.00 × getOneAccount alone's",
];

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runBench(env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bench/run.ts'], { cwd: REPOSITORY, env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('a tiny run measures every server, prints one table with a verdict per target and drops its scratch database', async (t) => {
  const run = await runBench({ ...TINY_RUN, DATABASE_URL: serverUrl() });
  t.is(run.code, 0, run.stderr);
  for (const expected of [
    '1. GET /api/sample/heartbeat',
    'spaceport (whole chain)',
    'spaceport, metrics on',
    'spaceport, tracing on',
    'spaceport, tracing every request',
    'median of 3 processes',
    'bare Koa + same middleware',
    'Fastify 5 + same work',
    'Express 5',
    'node:http',
    '2a. JWT route, one token',
    'spaceport, system JWT (one token)',
    'spaceport, public',
    '2b. JWT route, new tokens',
    'spaceport, system JWT (new token each request)',
    '3. POST /api/sample/getOneAccount',
    'bare pg pool',
    '4. routing',
    'spaceport, 3 projects × 2 routes',
    'spaceport, 1 project × 2 routes',
    '5. memory',
    '6. getOneAccount through PgBouncer',
    'spaceport through PgBouncer',
    'spaceport, direct connection',
    '7. GET /api/benchmark/events/:from',
    '9. A noisy tenant beside getOneAccount',
    'getOneAccount beside the noisy tenant',
    'getOneAccount alone',
  ]) {
    t.true(run.stdout.includes(expected), `the table names ${expected}`);
  }
  t.regex(run.stdout, /req\/s\s+p99 ms\s+CPU µs\/req\s+DB CPU µs\/req\s+req\/s ratio\s+p99 ratio\s+CPU ratio/);
  t.regex(run.stdout, /^\s+node:http\s+[\d,]+\s+[\d.]+\s+[\d,]+\s+[\d.]+\s+(?:[\d.]+|n\/a)\s+[\d.]+\s+the route alone$/m);
  // Bare Koa, the comparison nearest the service, in three processes like the service.
  t.regex(run.stdout, /^\s+bare Koa \+ same middleware\s.*request id, log line, cached tenant, RateLimit-\*; median of 3 processes/m);
  // Three processes of each routing service, each start-up timed.
  t.regex(run.stdout, /start-up \d+, \d+, \d+ ms; GET \/api\/p002\/r1\/items\/42; median of 3 processes/);
  t.regex(run.stdout, /RSS \d+\.\d MB before, \d+\.\d MB after 150, \d+\.\d MB after all/);
  // A loaded machine may run the cold run longer or faster than foreseen: the tokens it then needs are signed as it runs.
  t.regex(run.stdout, /[\d,]+ tokens signed beforehand(, [\d,]+ more as the run needed them \([^)]*\))?, none sent twice/);
  t.false(run.stdout.includes('failed answers'), run.stdout);
  for (const target of ISSUE_13_TARGETS) {
    t.true(new RegExp(`${escaped(target)}\\s+\\S+ (×|ms|%)(\\s+\\S+ ×)?\\s+(MET|MISSED)$`, 'm').test(run.stdout), `the verdict on ${target}`);
  }
  // Item 3 reports PostgreSQL's CPU per lookup; item 8 adds where its time goes when Citus ran (without its tarball it says "not measured").
  t.regex(run.stdout, /PostgreSQL's CPU per lookup, one at a time\s+bare pg's \d+ µs; prepared once \d+ µs; the service's \(scope and statement\) \d+ µs; its scope alone \d+ µs\s+MET$/m);
  const targets = run.stdout.includes('where the time goes') ? 21 : 20;
  t.regex(run.stdout, new RegExp(`^targets met: \\d+ of ${targets}$`, 'm'));
  t.regex(run.stdout, /^settings changed from the defaults \(BENCH_SECONDS=0\.3, .*\): the verdicts are indicative only$/m);
  // By name: other bench runs may share this PostgreSQL server and create their own meanwhile.
  const scratch = /scratch database (spaceport_bench_[0-9a-f]+)/.exec(run.stderr)?.[1];
  t.truthy(scratch, run.stderr);
  t.false(await databaseExists(scratch ?? ''), `${scratch} is dropped`);
});

test('a bad setting stops the run before anything starts, naming the variable', async (t) => {
  const run = await runBench({ BENCH_SECONDS: 'soon', DATABASE_URL: serverUrl() });
  t.is(run.code, 1);
  t.regex(run.stderr, /bench failed: bench settings: BENCH_SECONDS: /);
  t.is(run.stdout, '');
});

test('an unreachable database fails the run with one line and a non-zero exit', async (t) => {
  const run = await runBench({ ...TINY_RUN, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
  t.is(run.code, 1);
  t.regex(run.stderr, /^bench failed: connect ECONNREFUSED 127\.0\.0\.1:1$/m);
  t.is(run.stdout, '');
});
