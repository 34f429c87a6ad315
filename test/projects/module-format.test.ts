import test from 'ava';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { dropTestDatabase } from '../helpers/service.ts';
import { json, migrateFileDatabase, startWithProjects, writeTree } from '../helpers/projects.ts';

test.before(migrateFileDatabase);
test.after.always(dropTestDatabase);

// Issue 37, point 3: `npm init -y` in a project folder writes `"type": "commonjs"`, and every
// project file then failed with "Cannot use import statement outside a module".
const NPM_INIT_PACKAGE = JSON.stringify({ name: 'orders', version: '1.0.0', main: 'index.js', type: 'commonjs' });
const HANDLER = "export function hello(req, res) { res.json({ hello: 'orders' }); }\n";
const ROUTES = "import { hello } from './handlers/hello.js';\nexport default [{ method: 'GET', path: '/hello', skipAuth: true, function: hello }];\n";

function projectsWithCommonjsPackage(routeFile: string, routes: string): string {
  return writeTree({
    'orders/package.json': NPM_INIT_PACKAGE,
    'orders/api/handlers/hello.js': HANDLER,
    [`orders/api/${routeFile}`]: routes,
    'orders/test/hello.test.js': "import { hello } from '../api/handlers/hello.js';\nconsole.log(typeof hello);\n",
  });
}

test('project files load as ES modules under a package.json saying "type": "commonjs"', async (t) => {
  const service = await startWithProjects(t, projectsWithCommonjsPackage('routes.js', ROUTES));
  t.deepEqual(await json(await service.fetch('/api/orders/hello')), { hello: 'orders' });
});

test('TypeScript route files load as ES modules there too', async (t) => {
  const typed = ROUTES.replace('(req, res)', '(req: unknown, res: unknown)');
  const service = await startWithProjects(t, projectsWithCommonjsPackage('routes.ts', typed));
  t.deepEqual(await json(await service.fetch('/api/orders/hello')), { hello: 'orders' });
});

test("a project's own test files load as ES modules there too (the test runner's workers)", (t) => {
  const projectsDir = projectsWithCommonjsPackage('routes.js', ROUTES);
  const testFile = path.join(projectsDir, 'orders/test/hello.test.js');
  const register = path.resolve(import.meta.dirname, '../../lib/testing/register.ts');
  const child = spawnSync(process.execPath, ['--import', register, '--input-type=module', '--eval', `await import(${JSON.stringify(pathToFileURL(testFile).href)});`], {
    env: { ...process.env, PROJECTS_DIR: projectsDir },
    encoding: 'utf8',
    timeout: 60_000,
  });
  t.is(child.stderr, '');
  t.is(child.stdout, 'function\n');
});

test('a syntax error there is still reported at its line', async (t) => {
  const broken = "import { hello } from './handlers/hello.js';\nexport default [{ method: 'GET', , }];\n";
  const error = await t.throwsAsync(startWithProjects(t, projectsWithCommonjsPackage('routes.js', broken)));
  t.regex(error?.message ?? '', /routes\.js: does not load: SyntaxError: Unexpected token ',' \(line 2\)/);
});
