import test from 'ava';
import { start } from 'spaceport/testing';

const API_KEY = 'a-key-for-the-tests';

/** The real service with this project alone, on a fresh database, with a tenant and a user. */
const app = await start({ project: '__project__', settings: { apiKey: API_KEY } });
test.after.always(() => app.close());

test('GET /ping answers anyone', async (t) => {
  const response = await app.get('/api/__project__/ping');
  t.is(response.status, 200);
  t.deepEqual(await response.json(), { success: true, project: '__project__' });
});

test("POST /notes keeps a note of the caller's, and GET /notes lists it", async (t) => {
  const author = await app.createUser({ username: 'author' });
  const created = await app.post('/api/__project__/notes', { as: author, json: { text: 'first note' } });
  t.is(created.status, 201);
  t.like(await created.json(), { success: true, data: { text: 'first note' } });
  const listed = await app.get('/api/__project__/notes', { as: author });
  t.like(await listed.json(), { success: true, total: 1, data: [{ text: 'first note' }] });
});

test('POST /notes without a token is 401', async (t) => {
  const response = await app.post('/api/__project__/notes', { json: { text: 'anonymous' } });
  t.is(response.status, 401);
});

test('POST /notes with a body its schema refuses is 400, naming every field at fault', async (t) => {
  const response = await app.post('/api/__project__/notes', { as: app.user, json: { text: 42, pinned: true } });
  t.is(response.status, 400);
  t.deepEqual(await response.json(), {
    error: 'body.pinned: is not allowed',
    errors: [
      { path: 'body.pinned', message: 'is not allowed' },
      { path: 'body.text', message: 'must be a string' },
    ],
  });
});

test('a user sees only their own notes, and a tenant only its own', async (t) => {
  await app.post('/api/__project__/notes', { as: app.user, json: { text: 'mine' } });
  const other = await app.createUser({ username: 'other' });
  t.like(await (await app.get('/api/__project__/notes', { as: other })).json(), { total: 0 });
  await app.createTenant('elsewhere');
  const stranger = await app.createUser({ username: app.user.username }, { tenant: 'elsewhere' });
  t.like(await (await app.get('/api/__project__/notes', { as: stranger, tenant: 'elsewhere' })).json(), { total: 0 });
});

test('DELETE /notes/:id is for admins: a member gets 403, an admin removes the note', async (t) => {
  const created = await app.post('/api/__project__/notes', { as: app.user, json: { text: 'to remove' } });
  const { data } = /** @type {{ data: { id: string } }} */ (await created.json());
  const member = await app.createUser({ username: 'member', role: 'member' });
  const refused = await app.delete(`/api/__project__/notes/${data.id}`, { as: member });
  t.is(refused.status, 403);
  const admin = await app.createUser({ username: 'admin', role: 'admin' });
  const removed = await app.delete(`/api/__project__/notes/${data.id}`, { as: admin });
  t.deepEqual(await removed.json(), { success: true, deleted: 1 });
  t.is((await app.delete(`/api/__project__/notes/${data.id}`, { as: admin })).status, 404);
});

test('GET /notes has a budget of its own per caller: the 31st call in a minute is 429', async (t) => {
  const busy = await app.createUser({ username: 'busy' });
  for (let call = 0; call < 30; call++) t.is((await app.get('/api/__project__/notes', { as: busy })).status, 200);
  const refused = await app.get('/api/__project__/notes', { as: busy });
  t.is(refused.status, 429);
  t.truthy(refused.headers.get('retry-after'));
  t.is((await app.get('/api/__project__/notes', { as: app.user })).status, 200, 'another caller keeps their budget');
});

test('POST /files keeps a file, and GET /files/:name sends it back', async (t) => {
  const form = new FormData();
  form.append('file', new Blob(['line one\n'], { type: 'text/plain' }), 'report.txt');
  const uploaded = await app.post('/api/__project__/files', { as: app.user, body: form });
  t.is(uploaded.status, 201);
  t.deepEqual(await uploaded.json(), { success: true, data: { name: 'report.txt', size: 9 } });
  const downloaded = await app.get('/api/__project__/files/report.txt', { as: app.user });
  t.is(downloaded.status, 200);
  t.is(downloaded.headers.get('content-disposition'), 'attachment; filename=report.txt');
  t.is(await downloaded.text(), 'line one\n');
  const empty = await app.post('/api/__project__/files', { as: app.user, body: new FormData() });
  t.is(empty.status, 400, 'the schema wants a file');
  const dotDot = new FormData();
  dotDot.append('file', new Blob(['x']), '..');
  t.is((await app.post('/api/__project__/files', { as: app.user, body: dotDot })).status, 400, 'a name that is no file name');
  const hidden = new FormData();
  hidden.append('file', new Blob(['x']), '.env');
  t.is((await app.post('/api/__project__/files', { as: app.user, body: hidden })).status, 400, 'a name starting with a dot, which GET /files/:name could never send back');
  await app.createTenant('elsewhere');
  const stranger = await app.createUser({ username: 'stranger' }, { tenant: 'elsewhere' });
  t.is((await app.get('/api/__project__/files/report.txt', { as: stranger, tenant: 'elsewhere' })).status, 404, "another tenant's files are apart");
});

test('GET /partner/status needs the API key', async (t) => {
  t.is((await app.get('/api/__project__/partner/status')).status, 401);
  t.is((await app.get('/api/__project__/partner/status', { headers: { 'x-api-key': 'wrong' } })).status, 401);
  const response = await app.get('/api/__project__/partner/status', { headers: { 'x-api-key': API_KEY } });
  t.is(response.status, 200);
  t.deepEqual(await response.json(), { success: true, data: { tenant: app.tenant, greeting: 'hello' } });
});
