import test from 'ava';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { start } from '../../lib/testing/index.ts';
import { cli, make } from '../helpers/cli.ts';
import { serverUrl } from '../helpers/database.ts';
import { scratchFolder } from '../helpers/scratch.ts';

/**
 * `make project`, then the project's own tests and the type check, as a newcomer runs them, in
 * a PROJECTS_DIR outside the repository (no package.json, no node_modules of its own). `-o
 * chromium` keeps the nested `make test` from looking for the browser the outer run set up.
 */
const projectsDir = scratchFolder('scaffold');
const inProjects = (...args: string[]) => [...args, `PROJECTS_DIR=${projectsDir}`];
const scaffolded = make(inProjects('project', 'NAME=shop'), serverUrl());
test.after.always(() => rmSync(projectsDir, { recursive: true, force: true }));

test.serial('make project NAME=shop writes a project and says what to do next', async (t) => {
  const { code, stdout, stderr } = await scaffolded;
  t.is(code, 0, stderr);
  t.deepEqual(stdout.trim().split('\n'), [
    `created ${path.join(projectsDir, 'shop')}: api/routes.js, api/handlers.js, api/settings.js, test/routes.test.js`,
    'next: make test PROJECT=shop, then make dev and open http://127.0.0.1:3000/docs',
  ]);
  for (const file of ['api/routes.js', 'api/handlers.js', 'api/settings.js', 'test/routes.test.js']) t.true(existsSync(path.join(projectsDir, 'shop', file)), file);
  t.false(readFileSync(path.join(projectsDir, 'shop', 'api', 'settings.js'), 'utf8').includes('__'), 'every placeholder filled in');
});

test.serial('the new project passes make test PROJECT=shop', async (t) => {
  await scaffolded;
  const { code, stdout, stderr } = await make(inProjects('-o', 'chromium', 'test', 'PROJECT=shop'), serverUrl());
  t.is(code, 0, stdout + stderr);
  t.is(stdout.trim().split('\n').at(-1), '9 passed, 0 failed');
});

test.serial('the new project passes the projects type check, and a typo in it fails it', async (t) => {
  await scaffolded;
  const env = { PROJECTS_DIR: projectsDir };
  const passing = await cli(['check-projects'], serverUrl(), env);
  t.is(passing.code, 0, passing.stdout + passing.stderr);
  t.is(passing.stdout.trim(), `checked 1 project(s) in ${projectsDir}`);

  const handlers = path.join(projectsDir, 'shop', 'api', 'handlers.js');
  const original = readFileSync(handlers, 'utf8');
  t.teardown(() => writeFileSync(handlers, original));
  writeFileSync(handlers, original.replace("res.json({ success: true, project: 'shop' })", "res.jsn({ success: true, project: 'shop' })"));
  const failing = await cli(['check-projects'], serverUrl(), env);
  t.is(failing.code, 1);
  t.regex(failing.stdout, /shop\/api\/handlers\.js\(\d+,\d+\): error TS2551: Property 'jsn' does not exist on type 'BridgeResponse'\. Did you mean 'json'\?/);
  t.is(failing.stderr, `check-projects: type errors in the projects of ${projectsDir}, listed above\n`);
});

test.serial("/openapi.json shows the JWT route's body schema and answers", async (t) => {
  await scaffolded;
  const app = await start({ projectsDir });
  t.teardown(() => app.close());
  const document = (await (await app.get('/openapi.json')).json()) as {
    paths: Record<string, Record<string, { summary: string; responses: Record<string, unknown> }>>;
    components: { schemas: Record<string, { required?: string[]; properties?: Record<string, unknown> }> };
  };
  const createNote = document.paths['/api/shop/notes']?.post;
  t.like(createNote, {
    summary: "Adds a note of the caller's",
    requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/shop.POST.notes.body' } } } },
    responses: { 201: { content: { 'application/json': { schema: { $ref: '#/components/schemas/shop.POST.notes.response201' } } } } },
  });
  t.truthy(createNote?.responses['401'], 'what the chain can answer too');
  t.deepEqual(document.components.schemas['shop.POST.notes.body']?.required, ['text']);
  t.deepEqual(Object.keys(document.components.schemas['shop.POST.notes.response201']?.properties ?? {}), ['success', 'data']);
  const upload = document.paths['/api/shop/files']?.post;
  t.like(upload?.responses, { 201: { content: { 'application/json': { schema: { $ref: '#/components/schemas/shop.POST.files.response201' } } } } });
  t.is(upload?.responses['200'], undefined, 'the upload answers 201, not the 200 of a route that declares no answer');
});

for (const [name, message] of [
  ['Shop', 'project: NAME: project folder name "Shop" must match ^[a-z0-9][a-z0-9_-]{0,62}$'],
  ['project', 'project: NAME: project folder name "project" is reserved for the default project\'s mount'],
  ['limits', 'project: NAME: project folder name "limits" is a section of the expert configuration; choose another'],
  ['', 'project: usage: make project NAME=<name>'],
] as const) {
  test(`make project NAME=${name} fails in one line`, async (t) => {
    const { code, stderr } = await make(['-s', ...inProjects('project', `NAME=${name}`)], serverUrl());
    t.is(code, 2);
    t.is(stderr.split('\n')[0], message);
  });
}

test.serial('make project with a taken NAME fails in one line and leaves the project as it was', async (t) => {
  await scaffolded;
  const routes = readFileSync(path.join(projectsDir, 'shop', 'api', 'routes.js'), 'utf8');
  const { code, stderr } = await make(['-s', ...inProjects('project', 'NAME=shop')], serverUrl());
  t.is(code, 2);
  t.is(stderr.split('\n')[0], `project: ${path.join(projectsDir, 'shop')} already exists; choose another NAME`);
  t.is(readFileSync(path.join(projectsDir, 'shop', 'api', 'routes.js'), 'utf8'), routes);
});

test('make test PROJECT= naming no project fails saying so', async (t) => {
  const { code, stdout, stderr } = await make(inProjects('-o', 'chromium', 'test', 'PROJECT=nothing'), serverUrl());
  t.not(code, 0);
  t.true(stderr.includes(`test: no project "nothing" in ${projectsDir}`), stderr);
  t.is(stdout.trim().split('\n').at(-1), '0 passed, 1 failed');
});
