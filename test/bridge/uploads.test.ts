import test from 'ava';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import type { UploadedFile, UploadedFiles } from '../../lib/bridge/index.ts';
import { LIMITS, MOUNT, startBridgeApp, type RouteCase, type RunningApp } from '../helpers/bridge-apps.ts';
import { scratchFolder } from '../helpers/scratch.ts';

/**
 * Uploads (SPEC §10.5): `req.files.<field>` in express-fileupload's temp-file shape, `mv` as a
 * promise and with a callback, base-name file names, limits answered 413, and no temporary file
 * left behind, whatever way the response ends.
 */
const temporary = scratchFolder('h3-uploads');
const destination = scratchFolder('h3-saved');

const list = (files: UploadedFiles | null | undefined, field: string): UploadedFile[] => {
  const entry = files?.[field];
  return entry === undefined ? [] : Array.isArray(entry) ? entry : [entry];
};

function describe(file: UploadedFile) {
  return {
    name: file.name,
    data: file.data.length,
    size: file.size,
    encoding: file.encoding,
    truncated: file.truncated,
    mimetype: file.mimetype,
    md5: file.md5,
    temporaryHere: path.dirname(file.tempFilePath) === temporary,
    temporaryExists: existsSync(file.tempFilePath),
    mv: typeof file.mv,
  };
}

const routes: RouteCase[] = [
  {
    method: 'post',
    path: '/inspect',
    handlers: [
      (req, res) => {
        const files = req.files;
        res.json({
          files: files === null ? null : files === undefined ? 'undefined' : Object.fromEntries(Object.entries(files).map(([field, entry]) => [field, Array.isArray(entry) ? entry.map(describe) : describe(entry)])),
          body: req.body ?? null,
        });
      },
    ],
  },
  {
    method: 'post',
    path: '/save-promise',
    handlers: [
      async (req, res) => {
        const [file] = list(req.files, 'file');
        if (!file) return res.status(400).json({ error: 'file is required' });
        const target = path.join(destination, file.name);
        await file.mv(target);
        res.json({ saved: target, temporaryExists: existsSync(file.tempFilePath) });
      },
    ],
  },
  {
    method: 'post',
    path: '/save-callback',
    handlers: [
      (req, res, next) => {
        const [file] = list(req.files, 'file');
        file?.mv(path.join(destination, `callback-${file.name}`), (error) => (error ? next(error) : res.json({ saved: file.name })));
      },
    ],
  },
  {
    method: 'post',
    path: '/fail',
    handlers: [
      () => {
        throw new Error('handler failed with the upload in hand');
      },
    ],
  },
  {
    method: 'post',
    path: '/shape',
    handlers: [
      (req, res) => {
        const files = req.files as Record<string, unknown> | null | undefined;
        if (!files) return res.json({ files: null });
        const prototype = Object.getPrototypeOf(files);
        res.json({
          fields: Object.keys(files),
          prototype: prototype === null ? 'null' : prototype === Object.prototype ? 'Object.prototype' : 'another object',
          inherited: ['constructor', 'toString', 'hasOwnProperty'].map((name) => typeof files[name]),
        });
      },
    ],
  },
  { method: 'post', path: '/slow', handlers: [(_req, res) => void setTimeout(() => res.json({ late: true }), 400)] },
  { method: 'post', path: '/handed-on', handlers: [(_req, _res, next) => next()] },
  { method: 'post', path: '/:any', handlers: [(req, res) => res.json({ reached: req.params.any, files: list(req.files, 'file').map(describe), body: req.body })] },
];

let bridge: RunningApp;
test.before(async () => {
  bridge = await startBridgeApp(routes, { temporaryDirectory: temporary });
});
test.after.always(async () => {
  await bridge?.close();
  rmSync(temporary, { recursive: true, force: true });
  rmSync(destination, { recursive: true, force: true });
});

const post = (pathname: string, body: FormData | string, headers?: Record<string, string>) =>
  fetch(`${bridge.url}${MOUNT}${pathname}`, { method: 'POST', body, headers });

function form(...files: Array<[field: string, name: string, content: string | Buffer, type?: string]>): FormData {
  const data = new FormData();
  for (const [field, name, content, type] of files) data.append(field, new Blob([content], { type: type ?? 'text/plain' }), name);
  return data;
}

/** What `/inspect` answers: each field's files described, and `req.body`. */
interface Inspection {
  files: null | 'undefined' | Record<string, Described & Described[]>;
  body: unknown;
}
type Described = ReturnType<typeof describe>;

const inspect = async (body: FormData | string, headers?: Record<string, string>): Promise<Inspection> =>
  (await (await post('/inspect', body, headers)).json()) as Inspection;

const md5 = (content: string | Buffer) => createHash('md5').update(content).digest('hex');

/** Cleanup runs as the response ends; give it a moment before looking. */
async function temporaryFiles(): Promise<string[]> {
  for (let attempt = 0; attempt < 50; attempt++) {
    if (readdirSync(temporary).length === 0) break;
    await delay(20);
  }
  return readdirSync(temporary);
}

test.serial('a file is req.files.<field> in the express-fileupload shape, on disk during the handler', async (t) => {
  const response = await post('/inspect', form(['file', 'report.csv', 'a,b\n1,2\n', 'text/csv']));
  t.is(response.status, 200);
  const { files, body } = (await response.json()) as Inspection;
  t.deepEqual(typeof files === 'object' ? files?.file : files, {
    name: 'report.csv',
    data: 0,
    size: 8,
    encoding: '7bit',
    truncated: false,
    mimetype: 'text/csv',
    md5: md5('a,b\n1,2\n'),
    temporaryHere: true,
    temporaryExists: true,
    mv: 'function',
  });
  t.deepEqual(body, {});
  t.deepEqual(await temporaryFiles(), [], 'removed once the response ended');
});

test.serial('several files under one field are an array in upload order; fields go to req.body', async (t) => {
  const data = form(['docs', 'one.txt', '1'], ['docs', 'two.txt', '22'], ['photo', 'p.png', Buffer.from([137, 80]), 'image/png']);
  data.append('title', 'holiday');
  data.append('tag', 'a');
  data.append('tag', 'b');
  const { files, body } = await inspect(data);
  if (files === null || typeof files !== 'object') return t.fail('files expected');
  t.deepEqual(files.docs.map((file) => [file.name, file.size]), [['one.txt', 1], ['two.txt', 2]]);
  t.is(files.photo.name, 'p.png');
  t.is(files.photo.mimetype, 'image/png');
  t.deepEqual(body, { title: 'holiday', tag: ['a', 'b'] });
});

test.serial('req.files is null for multipart without files, undefined for other requests', async (t) => {
  const fieldsOnly = new FormData();
  fieldsOnly.append('name', 'value');
  t.deepEqual(await inspect(fieldsOnly), { files: null, body: { name: 'value' } });
  t.deepEqual(await inspect('{"a":1}', { 'content-type': 'application/json' }), { files: 'undefined', body: { a: 1 } });
  const empty = form(['file', '', '', 'application/octet-stream']);
  t.is((await inspect(empty)).files, null, 'an empty file input is no file');
});

test.serial('a file field named like a member of Object.prototype is left out of req.files, as express-fileupload leaves it', async (t) => {
  const expected = { fields: ['file'], prototype: 'null', inherited: ['undefined', 'undefined', 'undefined'] };
  for (const [first, second] of [['__proto__', 'constructor'], ['toString', 'hasOwnProperty']]) {
    const response = await post('/shape', form([first, 'a.txt', 'a'], ['file', 'b.txt', 'b'], [second, 'c.txt', 'c']));
    t.is(response.status, 200);
    t.deepEqual(await response.json(), expected, `${first}, ${second}`);
  }
  t.deepEqual(await temporaryFiles(), [], 'the files left out are removed too');
  const only = await post('/shape', form(['__proto__', 'a.txt', 'a']));
  t.deepEqual(await only.json(), { ...expected, fields: [] });
});

test.serial('text fields named like a member of Object.prototype are left out of req.body, as express-fileupload leaves them; the others are all there, repeated ones as arrays', async (t) => {
  const prototypeKeys = Object.getOwnPropertyNames(Object.prototype);
  const name = fc.oneof(fc.constantFrom(...prototypeKeys, '0', 'length', 'isAdmin', 'a'), fc.string({ minLength: 1, maxLength: 8 }).filter((each) => !/[\r\n"]/.test(each)));
  const fields = fc.array(fc.tuple(name, fc.string({ maxLength: 12 })), { minLength: 1, maxLength: 8 });
  await fc.assert(
    fc.asyncProperty(fields, async (pairs) => {
      const data = new FormData();
      for (const [field, value] of pairs) data.append(field, value);
      const expected: Record<string, string | string[]> = {};
      for (const [field, value] of pairs) {
        if (prototypeKeys.includes(field)) continue;
        const earlier = expected[field];
        expected[field] = earlier === undefined ? value : Array.isArray(earlier) ? [...earlier, value] : [earlier, value];
      }
      const { body } = await inspect(data);
      return isDeepStrictEqual(body, expected);
    }),
    { numRuns: 60 },
  );
  const polluting = new FormData();
  polluting.append('isAdmin', '1');
  polluting.append('__proto__', '{"isAdmin":true}');
  t.deepEqual((await inspect(polluting)).body, { isAdmin: '1' });
});

test.serial('client file names are reduced to a base name and cannot leave the destination', async (t) => {
  const { files } = await inspect(form(['a', '../../evil.txt', 'x'], ['b', 'C:\\Users\\me\\win.txt', 'y'], ['c', '..', 'z']));
  if (files === null || typeof files !== 'object') return t.fail('files expected');
  t.deepEqual([files.a.name, files.b.name, files.c.name], ['evil.txt', 'win.txt', '']);
  const saved = (await (await post('/save-promise', form(['file', '../../escape.txt', 'stay inside']))).json()) as { saved: string };
  t.is(saved.saved, path.join(destination, 'escape.txt'));
  t.is(readFileSync(path.join(destination, 'escape.txt'), 'utf8'), 'stay inside');
  t.false(existsSync(path.join(destination, '..', '..', 'escape.txt')));
});

test.serial('mv returns a promise and also takes a callback; the file is moved, not copied', async (t) => {
  const promised = (await (await post('/save-promise', form(['file', 'promised.txt', 'by promise']))).json()) as { temporaryExists: boolean };
  t.false(promised.temporaryExists);
  t.is(readFileSync(path.join(destination, 'promised.txt'), 'utf8'), 'by promise');
  const called = await post('/save-callback', form(['file', 'called.txt', 'by callback']));
  t.deepEqual(await called.json(), { saved: 'called.txt' });
  t.is(readFileSync(path.join(destination, 'callback-called.txt'), 'utf8'), 'by callback');
});

test.serial('limits are 413: a file too large, too many files, fields too large', async (t) => {
  const big = await post('/inspect', form(['file', 'big.bin', Buffer.alloc(LIMITS.fileBytes + 1)]));
  t.is(big.status, 413);
  t.deepEqual(await big.json(), { error: 'file too large' });
  const many = await post('/inspect', form(...Array.from({ length: LIMITS.files + 1 }, (_, index) => ['f', `${index}.txt`, 'x'] as [string, string, string])));
  t.is(many.status, 413);
  t.deepEqual(await many.json(), { error: 'too many files' });
  const fields = new FormData();
  fields.append('text', 'x'.repeat(LIMITS.jsonBytes + 1));
  const long = await post('/inspect', fields);
  t.is(long.status, 413);
  t.deepEqual(await long.json(), { error: 'request body too large' });
  t.deepEqual(await temporaryFiles(), [], 'partial files are removed too');
});

test.serial('temporary files are removed when the handler fails', async (t) => {
  const response = await post('/fail', form(['file', 'doomed.txt', 'bye']));
  t.is(response.status, 500);
  t.deepEqual(await temporaryFiles(), []);
});

test.serial('temporary files are removed when the client leaves before the answer', async (t) => {
  const controller = new AbortController();
  const pending = fetch(`${bridge.url}${MOUNT}/slow`, { method: 'POST', body: form(['file', 'left.txt', 'gone']), signal: controller.signal });
  for (let attempt = 0; attempt < 50 && readdirSync(temporary).length === 0; attempt++) await delay(10);
  t.is(readdirSync(temporary).length, 1, 'the file waited on disk for the handler');
  controller.abort();
  await t.throwsAsync(pending);
  t.deepEqual(await temporaryFiles(), []);
});

test.serial('temporary files are removed when the client leaves mid-upload', async (t) => {
  const { hostname, port } = new URL(bridge.url);
  const boundary = 'h3boundary';
  const outgoing = request({ hostname, port, method: 'POST', path: `${MOUNT}/inspect`, headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': '100000' } });
  outgoing.on('error', () => {});
  outgoing.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="half.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  outgoing.write(Buffer.alloc(20_000, 1));
  for (let attempt = 0; attempt < 50 && readdirSync(temporary).length === 0; attempt++) await delay(10);
  t.is(readdirSync(temporary).length, 1, 'the partial file was on disk');
  outgoing.destroy();
  t.deepEqual(await temporaryFiles(), []);
});

test.serial('no temporary file is left after 200 uploads', async (t) => {
  const statuses: number[] = [];
  for (let round = 0; round < 20; round++) {
    const batch = Array.from({ length: 10 }, (_, index) => post('/inspect', form(['file', `upload-${round}-${index}.txt`, `content ${round} ${index}`])));
    for (const response of await Promise.all(batch)) {
      statuses.push(response.status);
      await response.arrayBuffer();
    }
  }
  t.is(statuses.length, 200);
  t.true(statuses.every((status) => status === 200));
  t.deepEqual(await temporaryFiles(), []);
});

test.serial('a multipart body handed on with next() reaches the next route parsed, not read twice', async (t) => {
  const data = form(['file', 'handed.txt', 'on and on']);
  data.append('note', 'kept');
  const response = await post('/handed-on', data);
  t.is(response.status, 200);
  const answer = (await response.json()) as { reached: string; files: Described[]; body: unknown };
  t.is(answer.reached, 'handed-on');
  t.like(answer.files[0], { name: 'handed.txt', size: 9, temporaryExists: true });
  t.deepEqual(answer.body, { note: 'kept' });
  t.deepEqual(await temporaryFiles(), []);
});

test.serial('by default uploads wait in a folder of the process, readable by its owner only', async (t) => {
  const where: RouteCase = { method: 'post', path: '/where', handlers: [(req, res) => res.json({ file: list(req.files, 'file')[0]?.tempFilePath })] };
  const defaults = await startBridgeApp([where]);
  t.teardown(() => defaults.close());
  const answer = await fetch(`${defaults.url}${MOUNT}/where`, { method: 'POST', body: form(['file', 'private.txt', 'tenant data']) });
  const { file } = (await answer.json()) as { file: string };
  const folder = path.dirname(file);
  t.is(path.dirname(folder), tmpdir());
  t.regex(path.basename(folder), /^spaceport-uploads-\w{6}$/, 'a name of its own, not one another user could take first');
  t.is(statSync(folder).mode & 0o777, 0o700);
  for (let attempt = 0; attempt < 50 && existsSync(file); attempt++) await delay(20);
  t.false(existsSync(file), 'the upload itself is removed once answered');
});
