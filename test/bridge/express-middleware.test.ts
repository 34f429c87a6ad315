import { createHash, randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import test, { type ExecutionContext } from 'ava';
import type { ListeningApp } from '../helpers/koa-app.ts';
import { HOOKS, hooksServiceForFile, startExpressHooks } from '../helpers/middleware-apps.ts';

/**
 * `req` is the readable stream Express middleware expects (SPEC §10.7): webhook and upload
 * routes that run `express.raw`, `express.text`, `express.json`, `express.urlencoded` or multer,
 * or read the raw body themselves, answer as under Express 5 when the service left the body
 * unread, skip or fail through `next(err)` when it had parsed it, and never take the service
 * down: after every request the process still runs, has logged no uncaught exception and
 * answers /healthz.
 */
const HANDLER_MS = 5000;
const service = hooksServiceForFile(HANDLER_MS);

let express: ListeningApp;
test.before(async () => {
  express = await startExpressHooks();
});
test.after.always(() => express?.close());

const BYTES = randomBytes(64 * 1024);
const CSV = 'id,name\n1,ada\n2,grace\n';
const JSON_BODY = { event: 'paid', amount: 42, tags: ['a', 'b'] };

function sha256(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** What a fixture handler answers for a Buffer or a string it received. */
function described(bytes: Buffer | string): unknown {
  return { kind: Buffer.isBuffer(bytes) ? 'buffer' : 'string', length: Buffer.byteLength(bytes), sha256: sha256(bytes) };
}

interface Sent {
  path: string;
  headers?: Record<string, string>;
  body: Buffer | string | FormData | (() => ReadableStream<Uint8Array>);
}

interface Answer {
  status: number;
  type: string | null;
  bytes: Buffer;
  requestId: string | null;
}

async function send(url: string, sent: Sent): Promise<Answer> {
  const body = typeof sent.body === 'function' ? sent.body() : sent.body;
  const response = await fetch(`${url}${HOOKS}${sent.path}`, { method: 'POST', headers: sent.headers, body, duplex: 'half' } as RequestInit);
  const { status, headers } = response;
  return { status, type: headers.get('content-type'), bytes: Buffer.from(await response.arrayBuffer()), requestId: headers.get('x-request-id') };
}

/** Sends to the service, then checks that it still serves. */
async function sendToService(t: ExecutionContext, sent: Sent): Promise<Answer> {
  const answer = await send(service().url, sent);
  t.is(await service().health(), 200, '/healthz answers afterwards');
  t.true(service().running(), 'the process still runs');
  t.deepEqual(service().uncaughtExceptions(), [], 'no exception escaped a request');
  return answer;
}

const form = (fields: Record<string, string>, files: Record<string, Buffer> = {}): FormData => {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) data.append(name, value);
  for (const [name, bytes] of Object.entries(files)) data.append(name, new Blob([bytes]), `${name}.bin`);
  return data;
};

/** A body sent chunked (no Content-Length), in pieces of 1000 bytes. */
const inPieces = (bytes: Buffer) => () =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (let offset = 0; offset < bytes.length; offset += 1000) controller.enqueue(bytes.subarray(offset, offset + 1000));
      controller.close();
    },
  });

const octets = { 'content-type': 'application/octet-stream' };

interface UnreadCase {
  name: string;
  sent: Sent;
  status: number;
  /** The JSON answer: what the handler saw, or the error body of SPEC §7. */
  json: unknown;
}

/** Bodies the service leaves unread: the service answers exactly as Express 5 does. */
const UNREAD_CASES: UnreadCase[] = [
  { name: 'express.raw() reads an application/octet-stream body byte for byte', sent: { path: '/raw', headers: octets, body: BYTES }, status: 200, json: described(BYTES) },
  { name: 'express.raw() reads a chunked body byte for byte', sent: { path: '/raw', headers: octets, body: inPieces(BYTES) }, status: 200, json: described(BYTES) },
  {
    name: 'express.raw() inflates a gzip body (the request piped into zlib, then unpiped)',
    sent: { path: '/raw', headers: { ...octets, 'content-encoding': 'gzip' }, body: gzipSync(BYTES) },
    status: 200,
    json: described(BYTES),
  },
  { name: 'express.raw() fails a body over its limit with 413 through next(err)', sent: { path: '/raw', headers: octets, body: Buffer.concat([BYTES, BYTES]) }, status: 413, json: { error: 'request entity too large' } },
  { name: 'express.raw() fails an unknown encoding with 415', sent: { path: '/raw', headers: { ...octets, 'content-encoding': 'rot13' }, body: BYTES }, status: 415, json: { error: 'unsupported content encoding "rot13"' } },
  { name: 'express.raw() fails a broken gzip body with 400', sent: { path: '/raw', headers: { ...octets, 'content-encoding': 'gzip' }, body: BYTES }, status: 400, json: { error: 'incorrect header check' } },
  { name: 'express.raw({type: () => true}) reads text/csv byte for byte', sent: { path: '/raw-any', headers: { 'content-type': 'text/csv' }, body: CSV }, status: 200, json: described(Buffer.from(CSV)) },
  { name: "express.text({type: 'text/csv'}) reads a CSV body", sent: { path: '/csv', headers: { 'content-type': 'text/csv' }, body: CSV }, status: 200, json: described(CSV) },
  {
    name: "express.text({type: 'text/csv'}) decodes the declared charset",
    sent: { path: '/csv', headers: { 'content-type': 'text/csv; charset=latin1' }, body: Buffer.from('caf\xe9', 'latin1') },
    status: 200,
    json: described('café'),
  },
  { name: 'express.json() skips a type it does not take', sent: { path: '/json', headers: octets, body: BYTES }, status: 200, json: { kind: 'undefined', value: null } },
  { name: 'multer skips a body that is not multipart', sent: { path: '/upload-single', headers: octets, body: BYTES }, status: 200, json: { file: null, files: null, body: null } },
  { name: 'a handler reads the raw body with for await', sent: { path: '/iterate', headers: octets, body: BYTES }, status: 200, json: described(BYTES) },
  { name: 'a handler reads a chunked raw body with for await', sent: { path: '/iterate', headers: octets, body: inPieces(BYTES) }, status: 200, json: described(BYTES) },
  { name: "a handler reads the raw body with req.on('data')", sent: { path: '/events', headers: octets, body: BYTES }, status: 200, json: described(BYTES) },
  { name: 'a handler reads the raw body with stream.pipeline', sent: { path: '/pipeline', headers: octets, body: inPieces(BYTES) }, status: 200, json: described(BYTES) },
  {
    name: 'express.raw() after req.setEncoding() refuses the stream with 500, as raw-body does',
    sent: { path: '/encoded-raw', headers: octets, body: BYTES },
    status: 500,
    json: { success: false, message: 'Internal Server Error' },
  },
  {
    name: 'every stream member is there and says what Node\'s request says, step by step, down to read()',
    sent: { path: '/members', headers: octets, body: inPieces(BYTES) },
    status: 200,
    json: {
      missing: [],
      steps: [0, 1, true, true, false, true, false, 0, false],
      after: { readable: false, readableEnded: true, complete: true, aborted: false, destroyed: true },
      body: described(BYTES),
    },
  },
  { name: "a handler reads a body of no declared type with req.on('data')", sent: { path: '/events', body: BYTES }, status: 200, json: described(BYTES) },
];

for (const each of UNREAD_CASES) {
  test(`as Express: ${each.name}`, async (t) => {
    const [actual, expected] = await Promise.all([sendToService(t, each.sent), send(express.url, each.sent)]);
    t.is(actual.status, each.status);
    t.is(actual.status, expected.status, 'the status Express gives');
    t.deepEqual(JSON.parse(actual.bytes.toString()), each.json);
    // Where Express renders its HTML error page, spaceport answers JSON (SPEC §7).
    if (actual.status === 200) t.deepEqual(actual.bytes, expected.bytes, 'the body Express gives');
  });
}

test('as Express: multer in a custom auth reads the multipart body the service has not read yet', async (t) => {
  const file = BYTES.subarray(0, 1000);
  const sent = { path: '/auth-upload', body: form({ note: 'hi' }, { file }) };
  const [actual, expected] = await Promise.all([sendToService(t, sent), send(express.url, sent)]);
  t.is(actual.status, 200);
  t.deepEqual(JSON.parse(actual.bytes.toString()), { file: { field: 'file', name: 'file.bin', size: 1000, sha256: sha256(file) }, files: null, body: { note: 'hi' } });
  t.deepEqual(actual.bytes, expected.bytes);
});

test('as Express: req.pipe(res) sends the raw body back byte for byte', async (t) => {
  const sent = { path: '/echo', headers: octets, body: inPieces(BYTES) };
  const [actual, expected] = await Promise.all([sendToService(t, sent), send(express.url, sent)]);
  t.is(actual.status, 200);
  t.is(actual.bytes.length, BYTES.length);
  t.true(actual.bytes.equals(BYTES));
  t.is(actual.type, expected.type);
});

interface ParsedCase {
  name: string;
  sent: Sent;
  json: unknown;
}

/** Bodies the service parsed before the route ran: the middleware finds them consumed and skips. */
const PARSED_CASES: ParsedCase[] = [
  { name: 'express.json() keeps the JSON the service parsed', sent: { path: '/json', headers: { 'content-type': 'application/json' }, body: JSON.stringify(JSON_BODY) }, json: { kind: 'object', value: JSON_BODY } },
  {
    name: 'express.urlencoded() keeps the form the service parsed',
    sent: { path: '/form', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&b=two&a[b]=3' },
    json: { kind: 'object', value: { a: '1', b: 'two', 'a[b]': '3' } },
  },
  { name: 'express.text() keeps the text the service read', sent: { path: '/text', headers: { 'content-type': 'text/plain' }, body: 'hello' }, json: described('hello') },
  {
    name: "express.raw({type: 'application/json'}) (a webhook's signature check) skips: req.body is the parsed JSON",
    sent: { path: '/raw-json', headers: { 'content-type': 'application/json' }, body: JSON.stringify(JSON_BODY) },
    json: { kind: 'object', value: JSON_BODY },
  },
  { name: 'express.raw({type: () => true}) skips a parsed JSON body', sent: { path: '/raw-any', headers: { 'content-type': 'application/json' }, body: '[1,2]' }, json: { kind: 'object', value: [1, 2] } },
  {
    name: 'multer skips a JSON body: req.body is the service\'s',
    sent: { path: '/upload-any', headers: { 'content-type': 'application/json' }, body: JSON.stringify(JSON_BODY) },
    json: { file: null, files: null, body: JSON_BODY },
  },
  { name: "req.on('data') with stream.finished over a parsed body ends at once, with nothing", sent: { path: '/events', headers: { 'content-type': 'application/json' }, body: '{"a":1}' }, json: described(Buffer.alloc(0)) },
  { name: 'for await over a parsed body ends at once, with nothing', sent: { path: '/iterate', headers: { 'content-type': 'application/json' }, body: '{"a":1}' }, json: described(Buffer.alloc(0)) },
];

for (const each of PARSED_CASES) {
  test(`parsed by the service: ${each.name}`, async (t) => {
    const answer = await sendToService(t, each.sent);
    t.is(answer.status, 200);
    t.deepEqual(JSON.parse(answer.bytes.toString()), each.json);
  });
}

test('parsed by the service: express.json() answers the service\'s 400 for malformed JSON, as Express does', async (t) => {
  const sent = { path: '/json', headers: { 'content-type': 'application/json' }, body: '{"a":' };
  const [actual, expected] = await Promise.all([sendToService(t, sent), send(express.url, sent)]);
  t.is(actual.status, 400);
  t.is(expected.status, 400);
});

const MULTER_ROUTES = ['/upload-single', '/upload-array', '/upload-none', '/upload-any'];

for (const path of MULTER_ROUTES) {
  test(`parsed by the service: multer (${path}) finds the multipart body read and fails through next(err), 500`, async (t) => {
    const sent = { path, body: form({ note: 'hi' }, { file: BYTES.subarray(0, 1000), files: BYTES.subarray(0, 500) }) };
    const answer = await sendToService(t, sent);
    t.is(answer.status, 500);
    t.deepEqual(JSON.parse(answer.bytes.toString()), { success: false, message: 'Internal Server Error' });
    const failure = service()
      .logLines()
      .find((line) => line.includes(`"requestId":"${answer.requestId}"`) && line.includes('"unhandled error"'));
    t.regex(failure ?? '', /Unexpected end of form/, "the logged failure is multer's own");
  });
}

const PARSED_BODIES: Array<[string, Sent['headers'], Sent['body']]> = [
  ['JSON', { 'content-type': 'application/json' }, '{"a":1}'],
  ['urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1'],
  ['text', { 'content-type': 'text/plain' }, 'hello'],
  ['multipart', undefined, form({ note: 'hi' }, { file: BYTES.subarray(0, 100) })],
];

for (const [kind, headers, body] of PARSED_BODIES) {
  test(`a ${kind} body the service parsed reads as consumed: complete, ended, not readable, _body`, async (t) => {
    const answer = await sendToService(t, { path: '/flags', headers, body });
    t.deepEqual(JSON.parse(answer.bytes.toString()), { complete: true, readable: false, readableEnded: true, parsedFlag: true, aborted: false, httpVersion: '1.1' });
  });
}

test('a body the service left unread reads as unread: readable, not ended, no _body', async (t) => {
  const answer = await sendToService(t, { path: '/flags', headers: octets, body: BYTES });
  t.like(JSON.parse(answer.bytes.toString()), { readable: true, readableEnded: false, parsedFlag: false, aborted: false, httpVersion: '1.1' });
});
