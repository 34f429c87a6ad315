import test from 'ava';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { start, type TestService } from '../../lib/testing/index.ts';
import { fixtureProjects, json, writeTree } from '../helpers/projects.ts';

const NOTES = path.join(fixtureProjects('testing'), 'notes');

let app: TestService;
test.before(async () => {
  app = await start({ project: NOTES, settings: { greeting: 'welcome', apiKey: 'k-3a9e' } });
});
test.after.always(() => app?.close());

test('a test gets a tenant, a user in it and a token the service accepts', async (t) => {
  t.is(app.tenant, 'test');
  t.is(app.user.tenant, 'test');
  t.is(app.user.role, 'member');
  t.deepEqual(await json(await app.get('/api/notes/whoami', { as: app.user })), { uid: app.user.uid, tenant: 'test' });
  t.like(app.verifyToken(app.user.token), { uid: app.user.uid, tenant: 'test', username: app.user.username });
});

test('the user logs in with its password', async (t) => {
  const response = await app.post('/auth/login', { json: { username: app.user.username, password: app.user.password } });
  t.is(response.status, 200);
  t.like(await json(response), { success: true });
});

test('requests carry the test tenant by default, another one, or none', async (t) => {
  t.like(await json(await app.get('/api/notes/echo')), { tenant: 'test', authorization: null });
  await app.createTenant('acme');
  t.like(await json(await app.get('/api/notes/echo', { tenant: 'acme' })), { tenant: 'acme' });
  t.like(await json(await app.get('/api/notes/echo', { headers: { tenant: 'acme' } })), { tenant: 'acme' });
  t.like(await json(await app.get('/api/notes/echo', { tenant: null })), { tenant: 'default' }, 'no header: the default tenant');
  t.is((await app.get('/api/notes/echo', { tenant: 'nowhere' })).status, 400);
});

test('json sends a JSON body; other bodies go as given', async (t) => {
  t.deepEqual(await json(await app.post('/api/notes/echo', { json: { a: [1] } })), { contentType: 'application/json', body: { a: [1] } });
  t.deepEqual(await json(await app.post('/api/notes/echo', { body: new URLSearchParams({ b: '2' }) })), {
    contentType: 'application/x-www-form-urlencoded;charset=UTF-8',
    body: { b: '2' },
  });
});

test('routes with system authentication refuse a request without `as`', async (t) => {
  t.is((await app.get('/api/notes/whoami')).status, 401);
  t.is((await app.get('/api/notes/whoami', { as: { token: 'not.a.token' } })).status, 401);
});

test('more users, in any tenant, and their documents', async (t) => {
  await app.createTenant('globex');
  const admin = await app.createUser({ username: 'gina', role: 'admin', name: 'Gina' }, { tenant: 'globex' });
  t.like(admin, { username: 'gina', role: 'admin', tenant: 'globex' });
  const created = await app.post('/api/notes/notes', { as: admin, tenant: 'globex', json: { text: 'from gina' } });
  t.is(created.status, 201);
  const { id } = (await created.json()) as { id: string };
  t.like(await app.documents('globex').collection('notes').findOne({ _id: id }), { text: 'from gina', author: admin.uid });
  t.is(await app.documents().collection('notes').findOne({ _id: id }), null, 'not in the test tenant');
  const stored = await app.documents('globex').collection('accounts').findOne({ username: 'gina' });
  t.is(stored?.name, 'Gina');
  t.not(stored?.password, admin.password, 'stored hashed');
});

test('the project gets the settings of the test; secrets from env reach it, not process.env', async (t) => {
  t.deepEqual(app.settings, { greeting: 'welcome', apiKey: 'k-3a9e' });
  t.deepEqual(await json(await app.get('/api/notes/greeting')), { greeting: 'welcome', keyed: true });
  const fromEnvironment = await start({ project: NOTES, env: { NOTES_API_KEY: 'from-env' } });
  t.teardown(() => fromEnvironment.close());
  t.deepEqual(fromEnvironment.settings, { greeting: 'hello', apiKey: 'from-env' });
  t.is(process.env.NOTES_API_KEY, undefined);
});

test('a project is found by name in PROJECTS_DIR, by path or by URL, and is the default project', async (t) => {
  const previous = process.env.PROJECTS_DIR;
  process.env.PROJECTS_DIR = fixtureProjects('testing');
  t.teardown(() => {
    if (previous === undefined) delete process.env.PROJECTS_DIR;
    else process.env.PROJECTS_DIR = previous;
  });
  for (const project of ['notes', NOTES, pathToFileURL(NOTES)]) {
    const byReference = await start({ project });
    t.teardown(() => byReference.close());
    t.is(byReference.project, 'notes');
    t.like(await json(await byReference.get('/api/project/greeting')), { greeting: 'hello' });
  }
});

test('a folder that is not a project is refused with its path', async (t) => {
  await t.throwsAsync(start({ project: '/nowhere/shop' }), { message: 'spaceport/testing: /nowhere/shop is not a project folder (it has no api/ folder)' });
  await t.throwsAsync(start({}), { message: /needs `project`/ });
});

async function databaseNames(): Promise<Set<string>> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    return new Set((await client.query<{ datname: string }>('select datname from pg_database')).rows.map((row) => row.datname));
  } finally {
    await client.end();
  }
}

test.serial('close stops the service and drops the database start made', async (t) => {
  const before = await databaseNames();
  const brief = await start({ project: NOTES });
  const made = [...(await databaseNames())].filter((name) => !before.has(name));
  t.true(made.length >= 1);
  await Promise.all([brief.close(), brief.close()]);
  const after = await databaseNames();
  t.true(made.some((name) => !after.has(name)), 'a database made by start is gone');
  await t.throwsAsync(fetch(brief.url));
});

test('a project that does not start rejects with the report, leaving nothing behind', async (t) => {
  const broken = path.join(writeTree({ 'projects/broken/api/routes.js': "export default [{ method: 'GET', path: '/x' }];\n" }), 'projects', 'broken');
  const error = await t.throwsAsync(start({ project: broken }));
  t.regex(error?.message ?? '', /^invalid project routes \(1 problem\):\n {2}.*broken\/api\/routes\.js #0 GET \/x: function is missing$/);
  t.true(existsSync(broken), 'the project itself is left alone');
});
