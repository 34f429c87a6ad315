import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import fc from 'fast-check';
import jwt from 'jsonwebtoken';
import { cpuAtMost, figureBelow, p99AtMost, throughputAtLeast } from '../../bench/harness/goals.ts';
import { measure, measureInTurn, send, type Measurement } from '../../bench/harness/load.ts';
import { withChildServer } from '../../bench/harness/processes.ts';
import type { Row } from '../../bench/harness/results.ts';
import type { ServiceSetup } from '../../bench/harness/service.ts';
import { benchSettings } from '../../bench/harness/settings.ts';
import { formatTable } from '../../bench/harness/table.ts';
import { TokenSupply } from '../../bench/harness/tokens.ts';
import { fixtureRouteWithFreshTokens, heartbeat } from '../../bench/scenarios/requests.ts';
import { listenOnLoopback } from '../helpers/koa-app.ts';

const execFileAsync = promisify(execFile);
const SETUP: ServiceSetup = { databaseUrl: 'postgres://unused', jwtSecret: 'bench-harness-test-secret-0123456789', root: '/unused' };

function row(server: string, requestsPerSecond: number, p99 = 1, failures = 0, cpuMicrosecondsPerRequest?: number, databaseCpuMicrosecondsPerRequest?: number): Row {
  const measurement: Measurement = { requestsPerSecond, p99, completed: 100, failures, cpuMicrosecondsPerRequest, databaseCpuMicrosecondsPerRequest };
  return { server, measurement };
}

test('every token of a supply is a valid system JWT of its own; reuse is counted once they run out', (t) => {
  const supply = new TokenSupply(SETUP, 50, 'reuse');
  const tokens = Array.from({ length: 50 }, () => supply.next());
  t.is(new Set(tokens).size, 50);
  for (const token of tokens) {
    const claims = jwt.verify(token, SETUP.jwtSecret, { algorithms: ['HS256'] }) as jwt.JwtPayload;
    t.like(claims, { uid: 'bench-account', tenant: 'default' });
    t.true(typeof claims.exp === 'number' && claims.exp > Date.now() / 1000);
  }
  t.is(supply.reused, 0);
  t.is(supply.next(), tokens[0]);
  t.is(supply.reused, 1);
});

test('a supply that signs when it runs out never hands a token out twice, and counts those it signed late', (t) => {
  const supply = new TokenSupply(SETUP, 50, 'sign');
  const tokens = Array.from({ length: 80 }, () => supply.next());
  t.is(new Set(tokens).size, 80);
  for (const token of tokens.slice(50)) t.like(jwt.verify(token, SETUP.jwtSecret, { algorithms: ['HS256'] }), { uid: 'bench-account', tenant: 'default' });
  t.is(supply.signedBeforehand, 50);
  t.is(supply.signedLate, 30);
  t.is(supply.reused, 0);
});

test('the cold-token load sends a token never sent before on every request', async (t) => {
  const seen: string[] = [];
  const server = await listenOnLoopback(
    createServer((request, response) => {
      seen.push(request.headers.authorization ?? '');
      response.end('success');
    }),
  );
  t.teardown(() => server.close());
  const supply = new TokenSupply(SETUP, 5000, 'sign');
  const settings = { ...benchSettings({}), connections: 2 };
  const measured = await send(fixtureRouteWithFreshTokens(server.url, supply), 200, 30, settings);
  t.is(measured.completed, 200);
  t.is(supply.reused, 0);
  t.true(seen.every((header) => header.startsWith('Bearer ')));
  t.is(new Set(seen).size, seen.length, 'no authorization header repeats');
});

test('p99 is measured to a fraction of a millisecond, not floored to whole ones as autocannon\'s histogram records it', async (t) => {
  const server = await listenOnLoopback(createServer((_request, response) => void setTimeout(() => response.end('success'), 3)));
  t.teardown(() => server.close());
  const target = { origin: server.url, requests: [{ method: 'GET', path: '/' }], expect: { status: 200, bodyIncludes: 'success' } };
  const measured = await send(target, 300, 30, { ...benchSettings({}), connections: 2 });
  t.is(measured.completed, 300);
  t.false(Number.isInteger(measured.p99), `p99 ${measured.p99} ms`);
  t.true(measured.p99 >= 2 && measured.p99 < 10_000, `p99 ${measured.p99} ms`);
});

test('a throughput target is met exactly when the ratio reaches the factor, and never judged on failed answers', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.constantFrom(0.4, 0.6, 0.8, 0.9, 1, 2),
        fc.nat(3),
        (subject, other, factor, failures) => {
          const verdict = throughputAtLeast(row('subject', subject, 1, failures), row('other', other), factor);
          const expected = failures > 0 ? 'not valid' : subject / other >= factor ? 'met' : 'missed';
          return verdict.outcome === expected;
        },
      ),
    ),
  );
});

test('a CPU target is met exactly when the ratio stays within the factor, and not valid without both CPU figures or with failed answers', (t) => {
  t.is(cpuAtMost(row('spaceport', 1, 1, 0, 160), row('bare pg pool', 1, 1, 0, 100), 1.6).outcome, 'met');
  t.like(cpuAtMost(row('spaceport', 1, 1, 0, 161), row('bare pg pool', 1, 1, 0, 100), 1.6), { target: "CPU per request ≤ 1.60 × bare pg pool's", actual: '1.61 ×', outcome: 'missed' });
  t.is(cpuAtMost(row('spaceport', 1, 1, 2, 100), row('bare pg pool', 1, 1, 0, 100), 1.6).outcome, 'not valid');
  t.is(cpuAtMost(row('spaceport', 1, 1, 0, 100), row('bare pg pool', 1, 1, 1, 100), 1.6).outcome, 'not valid');
  t.like(cpuAtMost(row('spaceport', 1, 1, 0, 100), row('bare pg pool', 1), 1.6), { actual: 'no CPU figure', outcome: 'not valid' });
  t.is(cpuAtMost(row('spaceport', 1), row('bare pg pool', 1, 1, 0, 100), 1.6).outcome, 'not valid');
});

test('the table ends with one line per target and how many were met', (t) => {
  const subject = row('spaceport', 900, 30, 0, 400, 250);
  const floor = row('bare pg pool', 1000, 10, 0, 100, 120);
  const text = formatTable([
    {
      title: '3. getOneAccount',
      rows: [subject, floor],
      verdicts: [
        throughputAtLeast(subject, floor, 0.6),
        p99AtMost(subject, floor, 2),
        cpuAtMost(subject, floor, 1.6),
        figureBelow('start-up', 2480, 2000, 'ms', row('spaceport', 1, 1, 3)),
      ],
    },
    { title: '1. heartbeat', rows: [row('node:http', 5000, 2, 0, 30)], verdicts: [] },
  ]);
  t.regex(text, /server\s+req\/s\s+p99 ms\s+CPU µs\/req\s+DB CPU µs\/req\s+req\/s ratio/);
  t.regex(text, /bare pg pool\s+1,000\s+10\s+100\s+120\s+0\.90\s+3\.00\s+0\.25/);
  t.regex(text, /^1\. heartbeat\s+node:http\s+5,000\s+2\.0\s+30$/m, 'no database, no DB CPU figure');
  t.regex(text, /3\. getOneAccount\s+req\/s ≥ 0\.60 × bare pg pool\s+0\.90 ×\s+0\.25 ×\s+MET/);
  t.regex(text, /p99 ≤ 2\.00 × bare pg pool's\s+3\.00 ×\s+MISSED/);
  t.regex(text, /CPU per request ≤ 1\.60 × bare pg pool's\s+4\.00 ×\s+MISSED/);
  t.regex(text, /start-up < 2,000 ms\s+2,480 ms\s+NOT VALID/);
  t.regex(text, /targets met: 1 of 4$/);
});

test('a server process is priced in CPU time per request', async (t) => {
  // /proc counts CPU time in 10 ms ticks, and a loaded machine may leave a one-second run a
  // dozen requests: a server that spends 5 ms of CPU on each is priced near that, however few.
  const settings = { ...benchSettings({}), seconds: 1, warmupSeconds: 0, connections: 2 };
  const options = { name: 'busy', script: path.join(import.meta.dirname, 'fixtures/busy-server.ts'), env: {}, readyPath: '/' };
  const measured = await withChildServer(options, (server) => measure(heartbeat(server.origin), settings, server));
  const cpu = measured.cpuMicrosecondsPerRequest ?? Number.NaN;
  t.true(cpu >= 2500 && cpu < 20_000, `${cpu} µs a request over ${measured.completed} requests`);
});

test('every server of the bench runs with the Node arguments the bench was started with (Makefile SERVE)', async (t) => {
  const starter = path.resolve(import.meta.dirname, 'fixtures/start-through-harness.ts');
  const { stdout } = await execFileAsync(process.execPath, ['--no-allocation-site-pretenuring', starter]);
  t.deepEqual(JSON.parse(stdout), ['--no-allocation-site-pretenuring']);
});

test('the settings name every variable moved off its default, so a shrunk run says its verdicts are indicative', (t) => {
  t.deepEqual(benchSettings({}).changed, []);
  t.deepEqual(benchSettings({ BENCH_SECONDS: '5', BENCH_PROJECTS: '3' }).changed, ['BENCH_PROJECTS=3']);
});

test('servers measured in turn get their rounds one after the other, the order turning from round to round, and each a median run', async (t) => {
  const served: string[] = [];
  const origins: string[] = [];
  for (const name of ['first', 'second', 'third']) {
    const listening = await listenOnLoopback(
      createServer((_request, response) => {
        served.push(name);
        response.end('success');
      }),
    );
    t.teardown(listening.close);
    origins.push(listening.url);
  }
  const settings = { ...benchSettings({ BENCH_SECONDS: '0.2', BENCH_WARMUP_SECONDS: '0', BENCH_CONNECTIONS: '1' }), rounds: 3 };
  const runs = await measureInTurn(
    origins.map((origin) => ({ target: { origin, requests: [{ method: 'GET', path: '/' }], expect: { status: 200, bodyIncludes: 'success' } } })),
    settings,
  );
  const turns = served.filter((name, index) => name !== served[index - 1]);
  // Each round starts one server further on, so no server always follows the same one.
  t.deepEqual(turns, ['first', 'second', 'third', 'second', 'third', 'first', 'third', 'first', 'second']);
  t.is(runs.length, 3);
  for (const run of runs) t.true(run.completed > 0 && run.failures === 0, JSON.stringify(run));
});
