import { once } from 'node:events';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { freePort } from '../../lib/dev/embedded-postgres/free-port.ts';
import { type ContinuousRequests, continuousRequests, DevProcess } from '../helpers/dev-process.ts';
import { writeTree } from '../helpers/projects.ts';
import { dropTestDatabase, TEST_JWT_SECRET, testDatabaseUrl } from '../helpers/service.ts';
import { scratchFolder } from '../helpers/scratch.ts';

test.after.always(dropTestDatabase);

const routeWith = (path: string, handler: string) => `{ method: 'GET', path: '${path}', skipAuth: true, function: ${handler} }`;
const route = (path: string, answer: unknown) => routeWith(path, `(req, res) => res.json(${JSON.stringify(answer)})`);
const routeFile = (...routes: string[]) => `export default [\n  ${routes.join(',\n  ')},\n];\n`;
const ROUTES = 'projects/shop/api/routes.js';
// The public routes' rate limit would otherwise stop the request loops within a minute.
const LOOSE_RATE_LIMIT = { rateLimit: { public: { windowMs: 60_000, max: 10_000_000 } } };

interface DevOverFiles {
  readonly dev: DevProcess;
  /** `path` on make dev's port. */
  readonly url: (path: string) => string;
  /** Saves a file of the tree, as an editor would. */
  readonly save: (relative: string, content: string) => void;
}

/** `continuousRequests`, stopped after the test even when it fails. */
function requestsAllAlong(t: ExecutionContext, address: string): ContinuousRequests {
  const load = continuousRequests(address);
  t.teardown(() => load.stop());
  return load;
}

/** `make dev` over a tree of `projects/` and `expert.json` (loose rate limits unless given), stopped after the test. */
async function startDev(t: ExecutionContext, files: Record<string, string>, env: NodeJS.ProcessEnv = {}): Promise<DevOverFiles> {
  const root = writeTree({ 'expert.json': JSON.stringify(LOOSE_RATE_LIMIT), ...files });
  const port = await freePort();
  const { DATABASE_URL: _suiteDatabase, ...environment } = process.env;
  const dev = new DevProcess({
    ...environment,
    DATABASE_URL: await testDatabaseUrl(),
    DATA_DIR: scratchFolder('e2-dev'),
    PORT: String(port),
    HOST: '127.0.0.1',
    PROJECTS_DIR: path.join(root, 'projects'),
    EXPERT_CONFIG: path.join(root, 'expert.json'),
    JWT_SECRET: TEST_JWT_SECRET,
    LOG_LEVEL: 'warn',
    ...env,
  });
  t.teardown(() => dev.stop());
  return { dev, url: (path) => `http://127.0.0.1:${port}${path}`, save: (relative, content) => writeFileSync(path.join(root, relative), content) };
}

/**
 * The scenario of SPEC §13's `make dev`, with requests sent all along: edit a route file and see
 * the new answer; break it and see the report while the last good instance answers; fix it.
 */
async function reloadScenario(t: ExecutionContext, database: { DATABASE_URL?: string; DATA_DIR: string }): Promise<void> {
  // Each step starts a service process; on a loaded machine that takes tens of seconds.
  t.timeout(300_000);
  const { dev, url, save } = await startDev(t, { [ROUTES]: routeFile(route('/version', { version: 1 })) }, database);
  await dev.waitForOutput('start: instance 1 serving, 1 project routes mounted');
  t.regex(dev.output, /GET \/api\/shop\/version \(public\)/);
  t.regex(dev.output, /^\[[\d:.]+\] INFO \(dev\): make dev on http:\/\/127\.0\.0\.1:\d+: watching lib\//m, 'pretty, not JSON');

  const load = requestsAllAlong(t, url('/api/shop/version'));
  await load.waitFor('{"version":1}');

  save(ROUTES, routeFile(route('/version', { version: 2 })));
  await dev.waitForOutput('routes.js changed: instance 2 serving, 1 project routes mounted');
  await load.waitFor('{"version":2}');

  save(ROUTES, "export default [\n  { method: 'GET', path: '/version', function: (req, res) => res.json(,) },\n];\n");
  await dev.waitForOutput('routes.js changed: instance 3 did not start; instance 2 keeps serving');
  await dev.waitForOutput('invalid project routes (1 problem):');
  t.regex(dev.output, /routes\.js: does not load: SyntaxError: Unexpected token ','/);
  const whileBroken = load.seen().answered;
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.true(load.seen().answered > whileBroken, 'the last good instance still answers');

  save(ROUTES, routeFile(route('/version', { version: 3 }), route('/extra', { extra: true })));
  await dev.waitForOutput('routes.js changed: instance 4 serving, 2 project routes mounted');
  await load.waitFor('{"version":3}');
  t.regex(dev.output, /GET \/api\/shop\/extra \(public\)/);

  const report = await load.stop();
  t.log(`${report.answered} requests during three reloads, ${report.failures.length} failed`);
  t.deepEqual(report.failures, []);
  t.deepEqual(report.bodies, ['{"version":1}', '{"version":2}', '{"version":3}']);
  t.is(await dev.stop(), 0);
  await t.throwsAsync(fetch(url('/api/shop/version')), undefined, 'the port is released');
}

test.serial('make dev with DATABASE_URL reloads on a route change and loses no request', async (t) => {
  await reloadScenario(t, { DATA_DIR: scratchFolder('e2-dev') });
});

test.serial('make dev with the embedded database does the same, and stops that database on exit', async (t) => {
  // As root, embedded-postgres runs the server as `postgres`, which must reach the data folder.
  const dataDir = scratchFolder('e2-dev-embedded');
  chmodSync(dataDir, 0o755);
  await reloadScenario(t, { DATABASE_URL: undefined, DATA_DIR: dataDir });
  t.false(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid')), 'the embedded database has stopped');
});

test.serial('make dev stops at once even while an instance is still starting', async (t) => {
  const { dev } = await startDev(t, { 'projects/slow/api/routes.js': 'await new Promise((resolve) => setTimeout(resolve, 120_000));\nexport default [];\n' });
  await dev.waitForOutput('INFO (dev): make dev on');
  const started = Date.now();
  t.is(await dev.stop(), 0);
  t.true(Date.now() - started < 15_000, `stopped in ${Date.now() - started} ms`);
});

/** Far above a start on a loaded machine (a few seconds for this one project), to keep the test short. */
const TEST_START_LIMIT_MS = 15_000;

test.serial('a route file whose import never settles is given up after the start limit, and the next save loads', async (t) => {
  t.timeout(300_000);
  const { dev, url, save } = await startDev(t, { [ROUTES]: routeFile(route('/version', { version: 1 })) }, { DEV_START_LIMIT_MS: String(TEST_START_LIMIT_MS) });
  await dev.waitForOutput('start: instance 1 serving');
  const load = requestsAllAlong(t, url('/api/shop/version'));
  await load.waitFor('{"version":1}');

  // A top-level await on a request its server never answers (fetch waits 5 minutes for the
  // headers); the file also ignores SIGTERM, as project code may.
  const silentServer = createServer(() => {});
  silentServer.listen(0, '127.0.0.1');
  await once(silentServer, 'listening');
  t.teardown(() => void silentServer.close());
  const { port } = silentServer.address() as AddressInfo;
  const hanging = `process.on('SIGTERM', () => {});\nawait fetch('http://127.0.0.1:${port}/');\n`;
  save(ROUTES, hanging + routeFile(route('/version', { version: 2 })));
  const report = 'routes.js changed: instance 2 did not start within 15 s (does an import never settle?); instance 1 keeps serving';
  await dev.waitForOutput(report, TEST_START_LIMIT_MS + 60_000);
  t.is(dev.output.split('\n').filter((line) => line.includes(report)).length, 1, 'one line');
  const gaveUp = Date.now();
  while (dev.children() > 1 && Date.now() - gaveUp < 30_000) await new Promise((resolve) => setTimeout(resolve, 100));
  t.is(dev.children(), 1, 'the instance that did not start is stopped; instance 1 alone runs');

  save(ROUTES, routeFile(route('/version', { version: 3 })));
  await dev.waitForOutput('routes.js changed: instance 3 serving');
  await load.waitFor('{"version":3}');
  const seen = await load.stop();
  t.deepEqual(seen.failures, []);
  t.deepEqual(seen.bodies, ['{"version":1}', '{"version":3}']);
});

test.serial('a request in flight across a reload is allowed the limits.handlerMs its instance was started with', async (t) => {
  t.timeout(300_000);
  // Longer than make dev used to wait (10 s) once the new instance served, within the limit.
  const slowMs = 14_000;
  const { dev, url, save } = await startDev(t, {
    [ROUTES]: routeFile(
      route('/version', { version: 1 }),
      routeWith('/slow', `(req, res) => { setTimeout(() => res.json({ slow: true }), ${slowMs}); }`),
      routeWith('/silent', '() => {}'),
    ),
    'expert.json': JSON.stringify({ ...LOOSE_RATE_LIMIT, limits: { handlerMs: 18_000 } }),
  });
  await dev.waitForOutput('start: instance 1 serving');
  const load = requestsAllAlong(t, url('/api/shop/version'));
  await load.waitFor('{"version":1}');
  const sent = Date.now();
  const answer = async (path: string) => {
    const response = await fetch(url(path));
    return { status: response.status, body: await response.text(), ms: Date.now() - sent };
  };
  const slow = answer('/api/shop/slow');
  const silent = answer('/api/shop/silent');
  // A shorter limit for the next instance: the requests above keep their own instance's.
  save('expert.json', JSON.stringify({ ...LOOSE_RATE_LIMIT, limits: { handlerMs: 5000 } }));
  await dev.waitForOutput('expert.json changed: instance 2 serving');

  const slowAnswer = await slow;
  t.is(slowAnswer.status, 200, JSON.stringify(slowAnswer));
  t.is(slowAnswer.body, '{"slow":true}');
  const silentAnswer = await silent;
  t.is(silentAnswer.status, 504, JSON.stringify(silentAnswer));
  t.true(silentAnswer.ms >= 17_000, `the handler's limit, 18 s, passed first: ${silentAnswer.ms} ms`);
  const seen = await load.stop();
  t.deepEqual(seen.failures, []);
});

test.serial('an instance that stops on its own is reported and replaced, and the requests meanwhile wait for the new one', async (t) => {
  t.timeout(300_000);
  const { dev, url } = await startDev(t, {
    [ROUTES]: routeFile(
      route('/version', { version: 1 }),
      routeWith('/crash', "(req, res) => { setTimeout(() => { throw new Error('a timer of /crash threw'); }, 10); res.json({ crashing: true }); }"),
    ),
  });
  await dev.waitForOutput('start: instance 1 serving');
  const load = requestsAllAlong(t, url('/api/shop/version'));
  await load.waitFor('{"version":1}');

  t.is((await fetch(url('/api/shop/crash'))).status, 200);
  // The service drains, then exits non-zero (lib/main.ts).
  await dev.waitForOutput('); a new instance starts now');
  t.regex(dev.output, /instance 1 stopped on its own \(exit code [1-9]\d*\); a new instance starts now/);
  await dev.waitForOutput('restart after instance 1 stopped: instance 2 serving, 2 project routes mounted');
  const afterRestart = load.seen().answered;
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.true(load.seen().answered > afterRestart, 'instance 2 answers');

  // Crashing again at once: a loop is slowed down, not run flat out.
  t.is((await fetch(url('/api/shop/crash'))).status, 200);
  await dev.waitForOutput('); a new instance starts in 1 s');
  t.regex(dev.output, /instance 2 stopped on its own \(exit code [1-9]\d*\); a new instance starts in 1 s/);
  await dev.waitForOutput('restart after instance 2 stopped: instance 3 serving');
  const seen = await load.stop();
  t.log(`${seen.answered} requests during two crashes, ${seen.failures.length} failed`);
  t.deepEqual(seen.failures, []);
});
