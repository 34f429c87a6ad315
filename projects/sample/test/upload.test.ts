import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { start, type TestService, type TestUser } from 'spaceport/testing';

const scratch = mkdtempSync(path.join(tmpdir(), 'spaceport-sample-upload-'));
/** Deep enough that `../../x` would land inside `scratch`, where the test can look for it. */
const uploadDir = path.join(scratch, 'one', 'two', 'uploads');

const PREFIXES = ['/api/sample', '/api/project'] as const;

let app: TestService;
let uploader: TestUser;

test.before(async () => {
  app = await start({ project: 'sample', settings: { uploadDir } });
  uploader = await app.createUser({ username: 'uploader' });
});
test.after.always(async () => {
  await app?.close();
  rmSync(scratch, { recursive: true, force: true });
});

function form(fields: Record<string, string>, files: Array<{ field: string; name: string; content: string }>): FormData {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) data.append(name, value);
  for (const file of files) data.append(file.field, new Blob([file.content], { type: 'text/plain' }), file.name);
  return data;
}

/** An upload as the uploader, or as the given headers say when they are given. */
function upload(prefix: string, body: FormData | string | undefined, headers?: Record<string, string>): Promise<Response> {
  return app.post(`${prefix}/upload`, headers === undefined ? { as: uploader, body } : { headers, body });
}

for (const prefix of PREFIXES) {
  const tag = prefix.replaceAll('/', '_');

  test(`${prefix}/upload saves the file under the upload folder and answers its name and size`, async (t) => {
    const name = `report${tag}.txt`;
    const content = `quarterly figures ${prefix}\n`;
    const response = await upload(prefix, form({ note: 'q3' }, [{ field: 'file', name, content }]));
    t.is(response.status, 200);
    t.deepEqual(await response.json(), { success: true, data: { name, size: Buffer.byteLength(content) } });
    t.is(readFileSync(path.join(uploadDir, name), 'utf8'), content);
  });

  test(`${prefix}/upload keeps only the base name of ../../x`, async (t) => {
    const name = `x${tag}`;
    const response = await upload(prefix, form({}, [{ field: 'file', name: `../../${name}`, content: 'escape attempt' }]));
    t.is(response.status, 200);
    t.deepEqual(await response.json(), { success: true, data: { name, size: 14 } });
    t.is(readFileSync(path.join(uploadDir, name), 'utf8'), 'escape attempt');
    t.false(existsSync(path.join(scratch, 'one', name)));
    t.false(existsSync(path.join(uploadDir, '..', name)));
  });

  test(`${prefix}/upload without authentication is 401 and writes nothing`, async (t) => {
    const name = `anonymous${tag}.txt`;
    const response = await upload(prefix, form({}, [{ field: 'file', name, content: 'no' }]), {});
    t.is(response.status, 401);
    t.is(response.headers.get('www-authenticate')?.startsWith('Bearer'), true);
    t.is(typeof ((await response.json()) as { error?: unknown }).error, 'string');
    t.false(existsSync(path.join(uploadDir, name)));
  });

  test(`${prefix}/upload with a bad token is 401`, async (t) => {
    const response = await upload(prefix, form({}, [{ field: 'file', name: 'bad.txt', content: 'no' }]), { authorization: 'Bearer not.a.token' });
    t.is(response.status, 401);
    t.false(existsSync(path.join(uploadDir, 'bad.txt')));
  });

  test(`${prefix}/upload with a multipart body but no file is 400`, async (t) => {
    const response = await upload(prefix, form({ file: 'just text' }, []));
    t.is(response.status, 400);
    t.deepEqual(await response.json(), { error: 'file is required (multipart field "file")' });
  });

  test(`${prefix}/upload with the file under another field is 400`, async (t) => {
    const response = await upload(prefix, form({}, [{ field: 'attachment', name: `other${tag}.txt`, content: 'x' }]));
    t.is(response.status, 400);
    t.deepEqual(await response.json(), { error: 'file is required (multipart field "file")' });
    t.false(existsSync(path.join(uploadDir, `other${tag}.txt`)));
  });

  test(`${prefix}/upload without a body is 400`, async (t) => {
    const response = await upload(prefix, undefined);
    t.is(response.status, 400);
    t.is(typeof ((await response.json()) as { error?: unknown }).error, 'string');
  });

  test(`${prefix}/upload refuses a file named ".." instead of writing beside the folder`, async (t) => {
    const response = await upload(prefix, form({}, [{ field: 'file', name: '..', content: 'dot dot' }]));
    t.is(response.status, 400);
    t.deepEqual(await response.json(), { error: 'the file name is not usable' });
    const parent = path.dirname(uploadDir);
    t.deepEqual(existsSync(parent) ? readdirSync(parent).filter((entry) => entry !== 'uploads') : [], []);
  });

  test(`${prefix}/upload with two files in the field is 400 and saves neither`, async (t) => {
    const files = [`first${tag}.txt`, `second${tag}.txt`].map((name) => ({ field: 'file', name, content: name }));
    const response = await upload(prefix, form({}, files));
    t.is(response.status, 400);
    // The route's schema declares `file` as one file: the service refuses two before the handler runs.
    t.deepEqual(await response.json(), { error: 'body.file: must be one file (got 2)', errors: [{ path: 'body.file', message: 'must be one file (got 2)' }] });
    for (const { name } of files) t.false(existsSync(path.join(uploadDir, name)));
  });
}

test('/upload creates the upload folder when it does not exist yet', async (t) => {
  const freshDir = path.join(scratch, 'fresh', 'nested', 'uploads');
  const fresh = await start({ project: 'sample', settings: { uploadDir: freshDir } });
  t.teardown(() => fresh.close());
  t.is(fresh.settings.uploadDir, freshDir);
  t.false(existsSync(freshDir));
  const response = await fresh.post('/api/sample/upload', { as: fresh.user, body: form({}, [{ field: 'file', name: 'first.txt', content: 'first' }]) });
  t.is(response.status, 200);
  t.deepEqual(readdirSync(freshDir), ['first.txt']);
});

test('the sample sends no upload back: its folder holds every tenant\'s files, so a download route would hand one tenant\'s file to another', async (t) => {
  const own = await start({ project: 'sample' });
  t.teardown(() => own.close());
  const sent = await own.post('/api/sample/upload', { as: own.user, body: form({}, [{ field: 'file', name: 'kept.txt', content: 'kept' }]) });
  t.is(sent.status, 200);
  t.is((await own.get('/api/sample/upload/kept.txt', { as: own.user })).status, 404);
});

test.serial('by default files go to uploads/ under DATA_DIR, not under the working directory', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'spaceport-sample-data-'));
  const own = await start({ project: 'sample', env: { DATA_DIR: dataDir } });
  try {
    const form = new FormData();
    form.append('file', new Blob(['kept under DATA_DIR']), 'in-data-dir.txt');
    const response = await own.post('/api/sample/upload', { body: form, as: own.user });
    t.is(response.status, 200);
    t.is(readFileSync(path.join(dataDir, 'uploads', 'in-data-dir.txt'), 'utf8'), 'kept under DATA_DIR');
  } finally {
    await own.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
