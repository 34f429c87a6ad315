import test from 'ava';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { fixtureProjects, writeTree } from '../helpers/projects.ts';
import { scratchFolder } from '../helpers/scratch.ts';

const run = promisify(execFile);
const REPOSITORY = path.resolve(import.meta.dirname, '../..');

/**
 * `make routes` as an operator runs it. `-o` marks the install stamp as up to date, so the
 * target never reinstalls packages under the other tests. No database is needed.
 */
async function makeRoutes(projectsDir: string, expert: object = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const scratch = scratchFolder('h4-cli');
  const expertFile = path.join(scratch, 'expert.json');
  writeFileSync(expertFile, JSON.stringify(expert));
  // The routeware fixture's webhook secret is a required setting.
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, PROJECTS_DIR: projectsDir, EXPERT_CONFIG: expertFile, DATA_DIR: scratch, HOOKS_WEBHOOK_SECRET: 'any' };
  try {
    const { stdout, stderr } = await run('make', ['-s', '-o', 'node_modules/.install-stamp', 'routes'], { cwd: REPOSITORY, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** The rows of the route table, its cells apart: the notes under it (`not listed: ...`) are no rows. */
const tableRows = (stdout: string) =>
  stdout
    .split('\n\n')[0]
    .trimEnd()
    .split('\n')
    .map((line) => line.split(/\s{2,}/))
    .filter((row) => row.length > 1);

const mountingFile = (project: string, file = 'routes.js') => path.join('test/fixtures/projects/mounting', project, 'api', file);

test('make routes prints method, both URLs, auth mode, project and file of every route', async (t) => {
  const { code, stdout, stderr } = await makeRoutes(fixtureProjects('mounting'), { projects: { default: 'alpha' } });
  t.is(code, 0, stderr);
  const alpha = mountingFile('alpha');
  const rows = [
    ['METHOD', 'URL', 'DEFAULT URL', 'AUTH', 'PROJECT', 'FILE', 'MIDDLEWARE'],
    ['GET', '/api/alpha/echo', '/api/project/echo', 'public', 'alpha', alpha, '-'],
    ['POST', '/api/alpha/echo', '/api/project/echo', 'public', 'alpha', alpha, '-'],
    ['GET', '/api/alpha/items/:id', '/api/project/items/:id', 'public', 'alpha', alpha, '-'],
    ['PUT', '/api/alpha/items/:id', '/api/project/items/:id', 'public', 'alpha', alpha, '-'],
    ['DELETE', '/api/alpha/items/:id', '/api/project/items/:id', 'public', 'alpha', alpha, '-'],
    ['GET', '/api/alpha/', '/api/project/', 'public', 'alpha', alpha, '-'],
    ['GET', '/api/alpha/steps/first', '/api/project/steps/first', 'public', 'alpha', alpha, '-'],
    ['GET', '/api/alpha/steps/:step', '/api/project/steps/:step', 'public', 'alpha', alpha, '-'],
    ['GET', '/api/alpha/protected', '/api/project/protected', 'system', 'alpha', alpha, '-'],
    ['GET', '/api/beta/hello', '-', 'public', 'beta', mountingFile('beta', 'routes.mjs'), '-'],
    ['GET', '/api/gamma/typed', '-', 'public', 'gamma', mountingFile('gamma', 'routes.ts'), '-'],
  ];
  const table = tableRows(stdout);
  t.deepEqual([table[0], ...table.filter((row) => row[4] !== '-').slice(1)], rows);
});

test('make routes lists the service\'s own routes first, PROJECT and FILE "-"', async (t) => {
  const { code, stdout, stderr } = await makeRoutes(fixtureProjects('mounting'), { spaces: { enabled: true } });
  t.is(code, 0, stderr);
  const system = stdout.trimEnd().split('\n').slice(1, 18).map((line) => line.split(/\s{2,}/));
  t.deepEqual(system, [
    ['GET', '/healthz', '-', 'public', '-', '-', '-'],
    ['GET', '/livez', '-', 'public', '-', '-', '-'],
    ['GET', '/readyz', '-', 'public', '-', '-', '-'],
    ['GET', '/metrics', '-', 'custom', '-', '-', '-'],
    ['GET', '/openapi.json', '-', 'public', '-', '-', '-'],
    ['GET', '/docs', '-', 'public', '-', '-', '-'],
    ['GET', '/docs/:asset', '-', 'public', '-', '-', '-'],
    ['POST', '/auth/login', '-', 'public', '-', '-', '-'],
    ['GET', '/spaces', '-', 'system', '-', '-', '-'],
    ['GET', '/spaces/:name', '-', 'system', '-', '-', '-'],
    ['POST', '/spaces', '-', 'system', '-', '-', '-'],
    ['PUT', '/spaces/:name', '-', 'system', '-', '-', '-'],
    ['DELETE', '/spaces/:name', '-', 'system', '-', '-', '-'],
    ['GET', '/spaces/:name/history', '-', 'system', '-', '-', '-'],
    ['POST', '/spaces/:name/restore', '-', 'system', '-', '-', '-'],
    ['GET', '/audit', '-', 'system', '-', '-', '-'],
    ['GET', '/api/alpha/echo', '-', 'public', 'alpha', mountingFile('alpha'), '-'],
  ]);
});

test('make routes leaves the /spaces routes out while spaces.enabled is false, as /openapi.json does, and says so', async (t) => {
  const { code, stdout, stderr } = await makeRoutes(fixtureProjects('mounting'), { spaces: { enabled: false } });
  t.is(code, 0, stderr);
  const lines = stdout.trimEnd().split('\n');
  t.deepEqual(lines.filter((line) => line.includes('/spaces')), ['not listed: the /spaces routes (spaces feature is disabled)']);
  t.true(lines.some((line) => line.startsWith('POST    /auth/login')), 'the other service routes are listed');
});

test('make routes prints a warning of the project loading as one readable line on stderr, after the command name', async (t) => {
  const { code, stdout, stderr } = await makeRoutes(fixtureProjects('mounting'), { spaces: { enabled: true } });
  t.is(code, 0, stderr);
  t.is(stderr, 'routes: several projects and no projects.default: /api/project is not mounted\n');
  t.false(stdout.includes('{'), 'no JSON log line in the table');
});

test('make routes names the middleware of each route, in order', async (t) => {
  const { code, stdout, stderr } = await makeRoutes(fixtureProjects('routeware'));
  t.is(code, 0, stderr);
  const rows = tableRows(stdout);
  const middlewareOf = (url: string) => rows.find((row) => row[1] === url)?.[6];
  t.is(middlewareOf('/api/hooks/ordered'), 'marker, marker');
  t.is(middlewareOf('/api/hooks/webhook'), 'verifySignature');
  t.is(middlewareOf('/api/hooks/answers'), 'anonymous');
  t.is(middlewareOf('/api/hooks/raw'), '-');
  t.is(middlewareOf('/healthz'), '-');
});

test('make routes names the custom auth mode', async (t) => {
  const { stdout } = await makeRoutes(fixtureProjects('chain'));
  const modes = tableRows(stdout).slice(1).map((row) => row.slice(1, 4));
  t.deepEqual(modes.filter(([url]) => url.startsWith('/api/')), [
    ['/api/guarded/claims', '/api/project/claims', 'system'],
    ['/api/guarded/claims-public', '/api/project/claims-public', 'public'],
    ['/api/guarded/claims-custom', '/api/project/claims-custom', 'custom'],
    ['/api/guarded/system', '/api/project/system', 'system'],
    ['/api/guarded/public', '/api/project/public', 'public'],
    ['/api/guarded/custom', '/api/project/custom', 'custom'],
    ['/api/guarded/public-custom', '/api/project/public-custom', 'custom'],
    ['/api/guarded/custom-throws', '/api/project/custom-throws', 'custom'],
    ['/api/guarded/custom-next-error', '/api/project/custom-next-error', 'custom'],
    ['/api/guarded/declined', '/api/project/declined', 'custom'],
    ['/api/guarded/declined-everywhere', '/api/project/declined-everywhere', 'custom'],
    ['/api/guarded/declined-:what', '/api/project/declined-:what', 'public'],
  ]);
});

test('make routes with invalid routes lists every problem and fails with one line', async (t) => {
  const { code, stdout, stderr } = await makeRoutes(fixtureProjects('invalid'));
  t.not(code, 0);
  t.is(stdout, '');
  const lines = stderr.trimEnd().split('\n');
  t.is(lines.filter((line) => line.startsWith('test/fixtures/projects/invalid/')).length, 18);
  t.true(lines.includes('test/fixtures/projects/invalid/badroutes/api/routes.js #1 PATCH /patch: method must be one of GET, POST, PUT, DELETE'));
  t.true(lines.includes('routes: 18 problem(s) in the projects (routes, settings, expert configuration), listed above'));
});

test('make routes over an empty projects folder says so', async (t) => {
  const empty = scratchFolder('no-projects');
  const { code, stdout } = await makeRoutes(empty);
  t.is(code, 0);
  const lines = stdout.trim().split('\n');
  t.is(lines.at(-1), `no project routes in ${empty}`);
  t.true(lines.some((line) => line.startsWith('GET     /healthz')), 'the service\'s own routes are listed still');
});

test('make routes shows a route’s own rate limit in the AUTH cell', async (t) => {
  const routes = `const answer = (req, res) => res.json({});
export default [
  { method: 'POST', path: '/report', rateLimit: { max: 10, windowMs: 60000, by: 'user' }, function: answer },
  { method: 'GET', path: '/search', skipAuth: true, rateLimit: { max: 5, windowMs: 1500, by: 'ip' }, function: answer },
  { method: 'GET', path: '/open', skipAuth: true, function: answer },
];
`;
  const { code, stdout, stderr } = await makeRoutes(writeTree({ 'limited/api/routes.js': routes }));
  t.is(code, 0, stderr);
  const rows = tableRows(stdout);
  const authOf = (url: string) => rows.find((row) => row[1] === url)?.[3];
  t.is(authOf('/api/limited/report'), 'system, 10/60s by user');
  t.is(authOf('/api/limited/search'), 'public, 5/1500ms by ip');
  t.is(authOf('/api/limited/open'), 'public');
});

test('make routes names the indexes each project declares, after the routes', async (t) => {
  const routes = "export default [{ method: 'GET', path: '/tickets', skipAuth: true, function: (req, res) => res.json([]) }];\n";
  const indexes = `export default [
  { collection: 'tickets', fields: { priority: -1, createdAt: 1 } },
  { collection: 'tickets', fields: { 'customer.email': 1 }, unique: true },
];
`;
  const { code, stdout, stderr } = await makeRoutes(writeTree({ 'helpdesk/api/routes.js': routes, 'helpdesk/api/indexes.js': indexes }));
  t.is(code, 0, stderr);
  const [, indexTable] = stdout.trimEnd().split('\n\n');
  const rows = (indexTable ?? '').split('\n').map((line) => line.split(/\s{2,}/));
  t.deepEqual(rows[0], ['INDEX', 'PROJECT', 'COLLECTION', 'FIELDS', 'UNIQUE']);
  t.deepEqual(
    rows.slice(1).map((row) => row.slice(1)),
    [
      ['helpdesk', 'tickets', 'priority:-1, createdAt:1', 'no'],
      ['helpdesk', 'tickets', 'customer.email:1', 'yes (queries)'],
      ['helpdesk', 'tickets', 'customer.email:1', 'yes (per tenant)'],
    ],
  );
  t.regex(rows[1]?.[0] ?? '', /^doci_helpdesk_tickets_priority_createdat_[0-9a-f]{10}$/);
  t.regex(rows[3]?.[0] ?? '', /^docu_helpdesk_tickets_customer_email_[0-9a-f]{10}$/);
});
