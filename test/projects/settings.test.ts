import test from 'ava';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ProjectLoadError } from '../../lib/projects/index.ts';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';
import { fixtureProjects, json, migrateFileDatabase, startWithProjects, writeTree } from '../helpers/projects.ts';

test.before(migrateFileDatabase);
test.after.always(dropTestDatabase);

const SHOP = fixtureProjects('settings');
const API_KEY = 'shop-key-4f1d9c27';

function startShop(t: import('ava').ExecutionContext, shop: Record<string, unknown>, env: Record<string, string> = {}): Promise<ServiceUnderTest> {
  return startWithProjects(t, SHOP, { expert: { shop }, env });
}

test('a project reads its settings from its section of the expert configuration, defaults filling the rest', async (t) => {
  const service = await startShop(t, { apiKey: API_KEY, greeting: 'welcome', ratio: 0.5 });
  const { greetingAtImport, ...values } = await json(await service.fetch('/api/shop/settings'));
  t.deepEqual(values, { greeting: 'welcome', pageSize: 20, ratio: 0.5, verbose: false });
  // The route file is imported once per process: what it reads then comes from the first service.
  t.is(typeof greetingAtImport, 'string', 'a route file may read its settings as it loads');
  t.is((await service.fetch('/api/shop/partner', { headers: { 'x-api-key': API_KEY } })).status, 200);
  t.is((await service.fetch('/api/shop/partner', { headers: { 'x-api-key': 'wrong' } })).status, 401);
});

test('a secret comes from <PROJECT>_<SETTING> in the environment, which wins over the expert file', async (t) => {
  const fromEnvironment = await startShop(t, {}, { SHOP_API_KEY: 'from-the-environment' });
  t.is((await fromEnvironment.fetch('/api/shop/partner', { headers: { 'x-api-key': 'from-the-environment' } })).status, 200);
  const both = await startShop(t, { apiKey: 'from-the-file' }, { SHOP_API_KEY: 'from-the-environment' });
  t.is((await both.fetch('/api/shop/partner', { headers: { 'x-api-key': 'from-the-environment' } })).status, 200);
  t.is((await both.fetch('/api/shop/partner', { headers: { 'x-api-key': 'from-the-file' } })).status, 401);
});

test('only secrets are read from the environment', async (t) => {
  const service = await startShop(t, { apiKey: API_KEY }, { SHOP_GREETING: 'from-the-environment', SHOP_PAGE_SIZE: '5' });
  t.like(await json(await service.fetch('/api/shop/settings')), { greeting: 'hello', pageSize: 20 });
});

test('two services of one process each see their own values', async (t) => {
  const first = await startShop(t, { apiKey: API_KEY, greeting: 'first' });
  const second = await startShop(t, { apiKey: API_KEY, greeting: 'second' });
  t.like(await json(await first.fetch('/api/shop/settings')), { greeting: 'first' });
  t.like(await json(await second.fetch('/api/shop/settings')), { greeting: 'second' });
});

test('secrets reach no log line, no error answer and not the config view', async (t) => {
  const service = await startShop(t, { apiKey: 'file-secret-77a1' }, { SHOP_API_KEY: 'environment-secret-93b2' });
  await service.fetch('/api/shop/partner', { headers: { 'x-api-key': 'environment-secret-93b2' } });
  await service.fetch('/api/shop/partner', { headers: { 'x-api-key': 'file-secret-77a1' } });
  const failure = await service.fetch('/api/shop/fail');
  const configView = await service.fetch('/api/shop/config');
  const seen = [service.logText(), await failure.text(), await configView.text()].join('\n');
  t.true(seen.includes('a handler failure'), 'the failure was logged');
  for (const secret of ['file-secret-77a1', 'environment-secret-93b2']) t.false(seen.includes(secret), secret);
  t.false(Object.hasOwn(JSON.parse(await (await service.fetch('/api/shop/config')).text()) as object, 'shop'));
});

/** Every kind of settings problem, each in a project of its own, all in one report. */
const troubled = writeTree({
  'projects/shop/api/settings.js': `import { defineSettings } from 'spaceport';
export default defineSettings({
  apiKey: { type: 'string', secret: true, required: true },
  label: { type: 'string', required: true },
  pageSize: { type: 'integer', default: 20 },
});
`,
  'projects/shop/api/routes.js': "export default [{ method: 'GET', path: '/x', skipAuth: true, function: (req, res) => res.send('x') }];\n",
  'projects/declared/api/settings.js': `import { defineSettings } from 'spaceport';
export default defineSettings({
  token: { type: 'string', secret: true, default: 'in-the-source' },
  Count: { type: 'int' },
  flag: { type: 'boolean', secert: true },
  size: { type: 'integer', default: 1.5 },
});
`,
  'projects/declared/api/routes.js': 'export default [];\n',
  'projects/plain/api/settings.js': "export default { apiKey: { type: 'string' } };\n",
  'projects/plain/api/routes.js': 'export default [];\n',
  'projects/envy/api/settings.js': "import { defineSettings } from 'spaceport';\nexport default defineSettings({ retries: { type: 'integer', secret: true } });\n",
  'projects/envy/api/routes.js': 'export default [];\n',
  'projects/bare/api/routes.js': 'export default [];\n',
  'projects/limits/api/routes.js': 'export default [];\n',
  'projects/fine/api/settings.js': "import { defineSettings } from 'spaceport';\nexport default defineSettings({ note: { type: 'string', default: 'fine' } });\n",
  'projects/fine/api/routes.js': "import settings from './settings.js';\nexport default [{ method: 'GET', path: '/note', skipAuth: true, function: (req, res) => res.send(settings.get('note')) }];\n",
});
const troubledDir = path.join(troubled, 'projects');
const api = (project: string, file = '') => path.join(troubledDir, project, 'api', file);
const TROUBLED_EXPERT = { shop: { pageSize: 'twenty', apiKy: 'x' }, bare: { anything: 1 }, colour: { red: true } };
const TROUBLED_ENV = { ENVY_RETRIES: 'several-secret-tries' };

const EXPECTED_REPORT = [
  'invalid project routes (14 problems):',
  `  ${path.join(troubledDir, 'limits')}: project folder name "limits" is a section of the expert configuration; choose another`,
  `  colour: expert configuration: unknown key (neither a built-in section nor a project in ${troubledDir})`,
  `  bare.anything: expert configuration: unknown setting (${api('bare')} has no settings.js)`,
  `  ${api('declared', 'settings.js')}: setting "token": a secret has no default: it would be in the source`,
  `  ${api('declared', 'settings.js')}: setting "Count": the name must be camelCase (^[a-z][A-Za-z0-9]*$)`,
  `  ${api('declared', 'settings.js')}: setting "Count": type must be one of string, number, integer, boolean`,
  `  ${api('declared', 'settings.js')}: setting "flag": unknown property "secert"`,
  `  ${api('declared', 'settings.js')}: setting "size": default must be an integer (got a fraction or a number too large)`,
  '  ENVY_RETRIES: environment variable: must be an integer',
  `  ${api('plain', 'settings.js')}: the default export must be defineSettings({...}) from 'spaceport'`,
  `  shop.apiKy: expert configuration: unknown setting (${api('shop', 'settings.js')} declares apiKey, label, pageSize)`,
  '  shop.apiKey: required and not set: set it in the expert configuration (shop.apiKey) or the environment (SHOP_API_KEY)',
  '  shop.label: required and not set: set it in the expert configuration (shop.label)',
  '  shop.pageSize: expert configuration: must be an integer (got string)',
];

test('start-up stops with every settings problem at once, each naming the project and the key', async (t) => {
  const error = await t.throwsAsync(startWithProjects(t, troubledDir, { expert: TROUBLED_EXPERT, env: TROUBLED_ENV }), { instanceOf: ProjectLoadError });
  t.deepEqual(error?.message.split('\n'), EXPECTED_REPORT);
  t.false(error?.message.includes('several-secret-tries'), 'a wrong secret is not shown');
});

test('with projects.onError "skip", a project with wrong settings is left out and the others serve', async (t) => {
  const { colour: _unknown, ...projectSections } = TROUBLED_EXPERT;
  const service = await startWithProjects(t, troubledDir, { expert: { ...projectSections, projects: { onError: 'skip', default: 'fine' } }, env: TROUBLED_ENV });
  t.is(await (await service.fetch('/api/fine/note')).text(), 'fine');
  t.is((await service.fetch('/api/shop/x')).status, 404);
  const skipped = service.logs().filter((line) => String(line.msg).endsWith('skipped: its routes are invalid'));
  t.deepEqual(skipped.map((line) => line.project).sort(), ['bare', 'declared', 'envy', 'limits', 'plain', 'shop']);
  t.false(service.logText().includes('several-secret-tries'));
});

test('a section naming no project stops start-up even with projects.onError "skip"', async (t) => {
  const unknown = await t.throwsAsync(startWithProjects(t, SHOP, { expert: { shop: { apiKey: API_KEY }, shpo: {}, projects: { onError: 'skip' } } }));
  t.regex(unknown?.message ?? '', /^ {2}shpo: expert configuration: unknown key \(neither a built-in section nor a project in /m);
});

test('a hyphenated project reads its secret from an upper snake case name', async (t) => {
  const projectsDir = path.join(
    writeTree({
      'projects/my-shop/api/settings.js': "import { defineSettings } from 'spaceport';\nexport default defineSettings({ apiKey: { type: 'string', secret: true, required: true }, live: { type: 'boolean', secret: true, required: true } });\n",
      'projects/my-shop/api/routes.js':
        "import settings from './settings.js';\nexport default [{ method: 'GET', path: '/x', skipAuth: true, function: (req, res) => res.json({ length: settings.get('apiKey').length, live: settings.get('live') }) }];\n",
    }),
    'projects',
  );
  const service = await startWithProjects(t, projectsDir, { env: { MY_SHOP_API_KEY: 'abc', MY_SHOP_LIVE: 'true' } });
  t.deepEqual(await json(await service.fetch('/api/my-shop/x')), { length: 3, live: true });
});

/** Projects in a new folder, each declaring the given secret settings and no route. */
function projectsWithSecrets(secrets: Record<string, readonly string[]>): string {
  const files: Record<string, string> = {};
  for (const [project, names] of Object.entries(secrets)) {
    const declarations = names.map((name) => `${name}: { type: 'string', secret: true }`).join(', ');
    files[`projects/${project}/api/settings.js`] = `import { defineSettings } from 'spaceport';\nexport default defineSettings({ ${declarations} });\n`;
    files[`projects/${project}/api/routes.js`] = "export default [{ method: 'GET', path: '/x', skipAuth: true, function: (req, res) => res.send('x') }];\n";
  }
  return path.join(writeTree(files), 'projects');
}

test('two projects whose secrets share an environment variable stop start-up, naming both projects, both settings and the variable', async (t) => {
  const projectsDir = projectsWithSecrets({ adv: ['apiKey'], 'adv-api': ['key'], fine: ['token'] });
  const settingsFile = (project: string) => path.join(projectsDir, project, 'api', 'settings.js');
  const env = { ADV_API_KEY: 'whose-secret-8e1f' };
  const error = await t.throwsAsync(startWithProjects(t, projectsDir, { env }), { instanceOf: ProjectLoadError });
  t.deepEqual(error?.message.split('\n'), [
    'invalid project routes (2 problems):',
    `  ${settingsFile('adv')}: secret "apiKey" would be read from ADV_API_KEY, as would secret "key" of project "adv-api"; rename one`,
    `  ${settingsFile('adv-api')}: secret "key" would be read from ADV_API_KEY, as would secret "apiKey" of project "adv"; rename one`,
  ]);
  t.false(error?.message.includes('whose-secret-8e1f'));
  // Leaving one out would pick for the operator whose secret it is: with "skip", both are left out.
  const service = await startWithProjects(t, projectsDir, { env, expert: { projects: { onError: 'skip', default: 'fine' } } });
  t.is((await service.fetch('/api/fine/x')).status, 200);
  for (const project of ['adv', 'adv-api']) t.is((await service.fetch(`/api/${project}/x`)).status, 404, project);
  const skipped = service.logs().filter((line) => String(line.msg).endsWith('skipped: its routes are invalid'));
  t.deepEqual(skipped.map((line) => line.project).sort(), ['adv', 'adv-api']);
});

test('a project secret is never read from a variable the service or Node.js reads', async (t) => {
  const projectsDir = projectsWithSecrets({ database: ['url'], jwt: ['secret'], redis: ['url'], log: ['level'], data: ['dir'], node: ['options'], uv: ['threadpoolSize'], fine: ['logLevel'] });
  const settingsFile = (project: string) => path.join(projectsDir, project, 'api', 'settings.js');
  const error = await t.throwsAsync(startWithProjects(t, projectsDir, { env: { JWT_SECRET: 'x'.repeat(32) } }), { instanceOf: ProjectLoadError });
  t.deepEqual(error?.message.split('\n'), [
    'invalid project routes (7 problems):',
    `  ${settingsFile('data')}: secret "dir" would be read from DATA_DIR, which the service itself reads; rename it`,
    `  ${settingsFile('database')}: secret "url" would be read from DATABASE_URL, which the service itself reads; rename it`,
    `  ${settingsFile('jwt')}: secret "secret" would be read from JWT_SECRET, which the service itself reads; rename it`,
    `  ${settingsFile('log')}: secret "level" would be read from LOG_LEVEL, which the service itself reads; rename it`,
    `  ${settingsFile('node')}: secret "options" would be read from NODE_OPTIONS, which Node.js itself reads (NODE_*); rename it`,
    `  ${settingsFile('redis')}: secret "url" would be read from REDIS_URL, which the service itself reads; rename it`,
    `  ${settingsFile('uv')}: secret "threadpoolSize" would be read from UV_THREADPOOL_SIZE, which Node.js itself reads (UV_*); rename it`,
  ]);
});

test('two settings files in one project are one problem', async (t) => {
  const projectsDir = path.join(
    writeTree({
      'projects/twice/api/settings.js': 'export default {};\n',
      'projects/twice/api/settings.ts': 'export default {};\n',
      'projects/twice/api/routes.js': 'export default [];\n',
    }),
    'projects',
  );
  const error = await t.throwsAsync(startWithProjects(t, projectsDir));
  t.is(error?.message, `invalid project routes (1 problem):\n  ${path.join(projectsDir, 'twice', 'api')}: more than one settings file (settings.js, settings.ts); keep one`);
});

test('make routes shows no secret, and reports settings problems as start-up does', async (t) => {
  const scratch = writeTree({});
  const expertFile = path.join(scratch, 'expert.json');
  const makeRoutes = async (expert: object) => {
    writeFileSync(expertFile, JSON.stringify(expert));
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, PROJECTS_DIR: SHOP, EXPERT_CONFIG: expertFile, DATA_DIR: scratch, SHOP_API_KEY: 'environment-secret-5c0e' };
    return promisify(execFile)('make', ['-s', '-o', 'node_modules/.install-stamp', 'routes'], { cwd: path.resolve(import.meta.dirname, '../..'), env }).then(
      ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: error.stdout + error.stderr }),
    );
  };
  const listed = await makeRoutes({ shop: { greeting: 'file-value-31d7' } });
  t.is(listed.code, 0, listed.output);
  t.regex(listed.output, /GET\s+\/api\/shop\/partner\s+\/api\/project\/partner\s+custom\s+shop/);
  t.false(listed.output.includes('environment-secret-5c0e'));
  const wrong = await makeRoutes({ shop: { pageSize: 'many' } });
  t.is(wrong.code, 2);
  t.regex(wrong.output, /shop\.pageSize: expert configuration: must be an integer \(got string\)/);
});
