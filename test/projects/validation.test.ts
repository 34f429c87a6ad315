import test from 'ava';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { ProjectLoadError } from '../../lib/projects/index.ts';
import { dropTestDatabase, testDatabaseUrl, TEST_JWT_SECRET } from '../helpers/service.ts';
import { fixtureProjects, json, migrateFileDatabase, startWithProjects, writeTree } from '../helpers/projects.ts';

test.before(migrateFileDatabase);
test.after.always(dropTestDatabase);

const invalid = fixtureProjects('invalid');
const shown = (...parts: string[]) => path.relative(process.cwd(), path.join(invalid, ...parts));
const badRoutes = shown('badroutes', 'api', 'routes.js');

/** One line per kind of problem SPEC §8.1 names, in the order the report prints them. */
const EXPECTED_REPORT = [
  'invalid project routes (18 problems):',
  `  ${shown('Bad_Name')}: project folder name "Bad_Name" must match ^[a-z0-9][a-z0-9_-]{0,62}$`,
  `  ${shown('project')}: project folder name "project" is reserved for the default project's mount`,
  `  ${shown('twofiles', 'api')}: more than one route file (routes.js, routes.mjs); keep one`,
  `  ${badRoutes} #1 PATCH /patch: method must be one of GET, POST, PUT, DELETE`,
  `  ${badRoutes} #2 GET no-slash: path must be a string starting with "/"`,
  `  ${badRoutes} #3 GET /no-function: function is missing`,
  `  ${badRoutes} #4 POST /not-a-function: function must be a function (got string)`,
  `  ${badRoutes} #5 GET /skip: skipAuth must be a boolean (got string)`,
  `  ${badRoutes} #6 GET /auth: auth must be a function (got boolean)`,
  `  ${badRoutes} #7 GET /extra: unknown property "middlewares" (did you mean "middleware"?)`,
  `  ${badRoutes} #8 GET /bad/(pattern: path is not a valid route pattern (Unexpected ( at index 5: /bad/(pattern)`,
  `  ${badRoutes} #9 (no method) (no path): a route must be an object (got string)`,
  `  ${badRoutes} #10 (no method) /no-method: method is missing`,
  `  ${shown('duplicates', 'api', 'routes.js')} #2 get /Items/:key/: same method and path as route #0 (case, a trailing slash and parameter names do not count)`,
  `  ${shown('noexport', 'api', 'routes.js')}: has no default export (an array of routes)`,
  `  ${shown('notarray', 'api', 'routes.js')}: the default export must be an array of routes (got object)`,
  `  ${shown('syntax', 'api', 'routes.js')}: does not load: SyntaxError: Unexpected token ',' (line 2)`,
  `  ${shown('throws', 'api', 'routes.js')}: does not load: Error: cannot reach the partner service at import time (line 1)`,
];

test('with projects.onError "fail", start-up stops with one report naming every problem', async (t) => {
  const error = await t.throwsAsync(startWithProjects(t, invalid), { instanceOf: ProjectLoadError });
  t.deepEqual(error?.message.split('\n'), EXPECTED_REPORT);
  t.is((error as ProjectLoadError).problems.length, 18);
});

test('with projects.onError "skip", invalid projects are left out and logged; valid ones serve', async (t) => {
  const service = await startWithProjects(t, invalid, { expert: { projects: { onError: 'skip' } } });
  t.deepEqual(await json(await service.fetch('/api/fine/still-here')), { project: 'fine' });
  t.is((await service.fetch('/api/project/still-here')).status, 200, 'the only loaded project is the default');
  t.is((await service.fetch('/api/badroutes/fine')).status, 404, 'a project with any problem is left out whole');
  const skipped = service.logs().filter((line) => String(line.msg).endsWith('skipped: its routes are invalid'));
  t.deepEqual(skipped.map((line) => line.project), ['Bad_Name', 'project', 'twofiles', 'badroutes', 'duplicates', 'noexport', 'notarray', 'syntax', 'throws']);
  const badRoutesProblems = skipped.find((line) => line.project === 'badroutes')?.problems as string[] | undefined;
  t.is(badRoutesProblems?.length, 10);
  t.is(badRoutesProblems?.[0], EXPECTED_REPORT[4].trim());
});

test('a PROJECTS_DIR outside the repository is reported with absolute paths', async (t) => {
  const outside = writeTree({ 'projects/wrong/api/routes.js': "export default [{ method: 'GET', path: '/x', function: 1 }];\n" });
  const error = await t.throwsAsync(startWithProjects(t, path.join(outside, 'projects')));
  t.is(error?.message, `invalid project routes (1 problem):\n  ${path.join(outside, 'projects', 'wrong', 'api', 'routes.js')} #0 GET /x: function must be a function (got number)`);
});

test('a module the route file imports that fails to load is named with its line', async (t) => {
  const handler = (body: string) => `export function handler(req, res) {\n${body}\n}\n`;
  const routes = "import { handler } from './handlers/broken.js';\nexport default [{ method: 'GET', path: '/x', function: handler }];\n";
  const outside = writeTree({
    'projects/syntax/api/routes.js': routes,
    'projects/syntax/api/handlers/broken.js': handler("  res.send('never') ,,"),
    'projects/throws/api/routes.js': routes,
    'projects/throws/api/handlers/broken.js': `${handler("  res.send('never');")}\nconst settings = undefined;\nexport const port = settings.port;\n`,
  });
  const projectsDir = path.join(outside, 'projects');
  const error = await t.throwsAsync(startWithProjects(t, projectsDir));
  t.deepEqual(error?.message.split('\n').slice(1), [
    `  ${path.join(projectsDir, 'syntax', 'api', 'routes.js')}: does not load: SyntaxError: Unexpected token ',' (api/handlers/broken.js line 2)`,
    `  ${path.join(projectsDir, 'throws', 'api', 'routes.js')}: does not load: TypeError: Cannot read properties of undefined (reading 'port') (api/handlers/broken.js line 6)`,
  ]);
});

test('`node lib/main.ts` prints the whole report and exits 1', async (t) => {
  const child = spawn(process.execPath, ['lib/main.ts'], {
    env: { ...process.env, PORT: '0', DATABASE_URL: await testDatabaseUrl(), JWT_SECRET: TEST_JWT_SECRET, PROJECTS_DIR: invalid, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const [code] = (await once(child, 'exit')) as [number | null];
  t.is(code, 1);
  t.is(stderr, `start-up failed: ${EXPECTED_REPORT.join('\n')}\n`);
});
