import test from 'ava';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { cli } from '../helpers/cli.ts';
import { dropTestDatabase, testDatabaseUrl, type ServiceUnderTest } from '../helpers/service.ts';
import { scratchFolder } from '../helpers/scratch.ts';
import { fixtureProjects, json, startWithProjects, tokenFor } from '../helpers/projects.ts';

const execFileAsync = promisify(execFile);

let service: ServiceUnderTest;
test.before(async () => {
  service = await startWithProjects(undefined, fixtureProjects('mounting'), { expert: { projects: { default: 'alpha' } } });
});
test.after.always(async () => {
  await service?.close();
  await dropTestDatabase();
});

test('a route answers at /api/<project><path> with the URL parts an Express router mounted there gives', async (t) => {
  const response = await service.fetch('/api/alpha/echo?x=1&x=2');
  t.is(response.status, 200);
  t.deepEqual(await json(response), {
    method: 'GET',
    path: '/echo',
    baseUrl: '/api/alpha',
    originalUrl: '/api/alpha/echo?x=1&x=2',
    params: {},
    query: { x: ['1', '2'] },
    tenant: 'default',
  });
});

test('the default project also answers at /api/project<path>', async (t) => {
  const response = await service.fetch('/api/project/items/42');
  t.is(response.status, 200);
  const body = await json(response);
  t.is(body.baseUrl, '/api/project');
  t.is(body.path, '/items/42');
  t.deepEqual(body.params, { id: '42' });
});

test('matching ignores case (project segment included) and a trailing slash; baseUrl keeps the URL as sent', async (t) => {
  const response = await service.fetch('/API/Alpha/ITEMS/Abc/');
  t.is(response.status, 200);
  const body = await json(response);
  t.is(body.baseUrl, '/API/Alpha');
  t.deepEqual(body.params, { id: 'Abc' });
  t.is(body.originalUrl, '/API/Alpha/ITEMS/Abc/');
});

test('route parameters are URI-decoded', async (t) => {
  const body = await json(await service.fetch('/api/alpha/items/a%20b%2Fc'));
  t.deepEqual(body.params, { id: 'a b/c' });
});

test('the project root and every method reach their route', async (t) => {
  const root = await service.fetch('/api/alpha');
  t.is(root.status, 200);
  t.is(await root.text(), 'alpha root');
  t.is(await (await service.fetch('/api/alpha/')).text(), 'alpha root');

  const headers = { 'content-type': 'application/json' };
  const created = await service.fetch('/api/alpha/echo', { method: 'POST', headers, body: '{"a":1}' });
  t.is(created.status, 201);
  t.deepEqual(await created.json(), { body: { a: 1 } });
  const replaced = await service.fetch('/api/alpha/items/7', { method: 'PUT', headers, body: '{"b":2}' });
  t.deepEqual(await replaced.json(), { replaced: '7', body: { b: 2 } });
  const deleted = await service.fetch('/api/project/items/7', { method: 'DELETE' });
  t.deepEqual(await deleted.json(), { deleted: '7' });
});

test('a GET route answers HEAD with the GET headers and no body', async (t) => {
  const response = await service.fetch('/api/alpha/echo', { method: 'HEAD' });
  t.is(response.status, 200);
  t.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
  t.is(await response.text(), '');
});

test('a known path with another method is 405 with Allow', async (t) => {
  const echo = await service.fetch('/api/alpha/echo', { method: 'PUT' });
  t.is(echo.status, 405);
  t.is(echo.headers.get('allow'), 'HEAD, GET, POST');
  t.deepEqual(await echo.json(), { error: 'Method Not Allowed' });
  const item = await service.fetch('/api/project/items/1', { method: 'POST' });
  t.is(item.status, 405);
  t.is(item.headers.get('allow'), 'HEAD, GET, PUT, DELETE');
});

test('unknown routes and unknown projects are 404', async (t) => {
  for (const url of ['/api/alpha/nothing', '/api/nobody/echo', '/api/project/hello', '/api', '/api/']) {
    const response = await service.fetch(url);
    t.is(response.status, 404, url);
    t.deepEqual(await response.json(), { error: 'Not Found' }, url);
  }
});

test('next() in a handler reaches the next route matching the same URL', async (t) => {
  t.deepEqual(await json(await service.fetch('/api/alpha/steps/first')), { reached: 'first' });
});

test('projects with routes.mjs and routes.ts load beside routes.js', async (t) => {
  const beta = await service.fetch('/api/beta/hello');
  t.is(beta.status, 200);
  t.is(await beta.text(), 'hello from beta');
  t.deepEqual(await json(await service.fetch('/api/gamma/typed')), { language: 'typescript', path: '/typed' });
});

test('a route without skipAuth or auth needs a system JWT, under both URLs', async (t) => {
  for (const url of ['/api/alpha/protected', '/api/project/protected']) {
    const anonymous = await service.fetch(url);
    t.is(anonymous.status, 401);
    t.is(anonymous.headers.get('www-authenticate'), 'Bearer');
    const token = await tokenFor(service, 'default', 'uid-7');
    const signedIn = await service.fetch(url, { headers: { authorization: `Bearer ${token}` } });
    t.deepEqual(await json(signedIn), { uid: 'uid-7' });
  }
});

test('start-up logs how many projects and routes it mounted', (t) => {
  const entry = service.logs().find((line) => line.msg === 'project routes loaded');
  t.like(entry, { projects: 3, routes: 11 });
});

test('several projects and no projects.default: /api/project is not mounted, and a warning says so', async (t) => {
  const withoutDefault = await startWithProjects(t, fixtureProjects('mounting'));
  t.is((await withoutDefault.fetch('/api/project/echo')).status, 404);
  t.is((await withoutDefault.fetch('/api/alpha/echo')).status, 200);
  const warning = withoutDefault.logs().find((line) => line.level === 40 && /projects\.default/.test(String(line.msg)));
  t.like(warning, { msg: 'several projects and no projects.default: /api/project is not mounted', projects: ['alpha', 'beta', 'gamma'] });
});

test('the only project is the default without configuration', async (t) => {
  const single = await startWithProjects(t, fixtureProjects('single'));
  t.deepEqual(await json(await single.fetch('/api/project/ping')), { project: 'solo', baseUrl: '/api/project' });
  t.deepEqual(await json(await single.fetch('/api/solo/ping')), { project: 'solo', baseUrl: '/api/solo' });
});

test('projects.default naming no loaded project stops start-up', async (t) => {
  const error = await t.throwsAsync(startWithProjects(t, fixtureProjects('mounting'), { expert: { projects: { default: 'delta' } } }));
  t.is(error?.message, 'invalid project routes (1 problem):\n  projects.default: names "delta", which is not a loaded project');
});

test('a PROJECTS_DIR named but missing stops start-up naming it (a typo served no project routes, /readyz 200)', async (t) => {
  const missing = fixtureProjects('does-not-exist');
  const error = await t.throwsAsync(startWithProjects(t, missing));
  t.is(error?.message, `PROJECTS_DIR: folder ${missing} does not exist`);
});

test('make routes and make check refuse a PROJECTS_DIR named but missing in one line', async (t) => {
  const missing = fixtureProjects('does-not-exist');
  for (const command of ['routes', 'check-projects']) {
    const { code, stdout, stderr } = await cli([command], await testDatabaseUrl(), { PROJECTS_DIR: missing });
    t.is(code, 1, command);
    t.is(stdout, '', command);
    t.is(stderr, `configuration error: PROJECTS_DIR: folder ${missing} does not exist\n`, command);
  }
});

test('an empty PROJECTS_DIR mounts nothing', async (t) => {
  const empty = await startWithProjects(t, scratchFolder('no-projects'));
  t.is((await empty.fetch('/api/project/ping')).status, 404);
  t.like(empty.logs().find((line) => line.msg === 'project routes loaded'), { projects: 0, routes: 0 });
});

test('without PROJECTS_DIR, a missing ./projects is no project at all', async (t) => {
  const elsewhere = scratchFolder('no-projects-folder');
  const { stdout } = await execFileAsync(process.execPath, [path.resolve('lib/cli/main.ts'), 'check-projects'], { cwd: elsewhere, env: { PATH: process.env.PATH } });
  t.is(stdout, `no projects in ${path.join(elsewhere, 'projects')}: nothing to check\n`);
});
