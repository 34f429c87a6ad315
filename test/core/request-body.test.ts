import test from 'ava';
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import { readJsonBody } from '../../lib/core/request-body.ts';

/**
 * The JSON body reader on a real HTTP server: each exchange hands the server's request to `read`
 * (after `before`, an earlier step of the chain) and resolves with what the read gave or threw.
 */
async function onServer(read: (request: IncomingMessage, response: ServerResponse) => Promise<unknown>, send: (port: number) => void): Promise<{ value?: unknown; status?: number; message?: string }> {
  const server = createServer();
  const outcome = new Promise<{ value?: unknown; status?: number; message?: string }>((resolve) => {
    server.once('request', (request: IncomingMessage, response: ServerResponse) => {
      read(request, response).then(
        (value) => resolve({ value }),
        (error: { status?: number; message?: string }) => resolve({ status: error.status, message: error.message }),
      );
      response.on('error', () => {});
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    send((server.address() as AddressInfo).port);
    return await Promise.race([outcome, sleep(5000).then(() => ({ message: 'the read never ended' }))]);
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

function post(port: number, headers: Record<string, string>, body: Buffer | string): void {
  const sent = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: '/', headers: { 'content-length': String(Buffer.byteLength(body)), ...headers } });
  sent.on('error', () => {});
  sent.end(body);
}

const LIMIT = 1024;

test('a body whose client left while an earlier step waited is refused at once (400), not awaited for ever', async (t) => {
  const outcome = await onServer(
    async (request, response) => {
      // The step before the read (a rate limit's round trip, a custom auth) outlasts the client.
      request.on('error', () => {});
      if (!request.destroyed) await new Promise((resolve) => request.once('close', resolve));
      return readJsonBody(request, response, LIMIT, true);
    },
    (port) => {
      const sent = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: '/', headers: { 'content-type': 'application/json', 'content-length': '100' } });
      sent.on('error', () => {});
      sent.write('{"a":');
      setTimeout(() => sent.destroy(), 50);
    },
  );
  t.deepEqual(outcome, { status: 400, message: 'malformed JSON body' });
});

test('well-formed JSON that is not an object or an array is refused as such (400), strict only; broken JSON stays malformed', async (t) => {
  for (const body of ['"str"', '""', '42', 'null', ' true']) {
    const strict = await onServer((request, response) => readJsonBody(request, response, LIMIT, true), (port) => post(port, { 'content-type': 'application/json' }, body));
    t.deepEqual(strict, { status: 400, message: 'JSON body must be an object or an array' }, body);
    const lenient = await onServer((request, response) => readJsonBody(request, response, LIMIT, false), (port) => post(port, { 'content-type': 'application/json' }, body));
    t.deepEqual(lenient, { value: JSON.parse(body) }, body);
  }
  for (const body of ['{"a":', 'hello', 'tru', "'x'", '<xml/>']) {
    const broken = await onServer((request, response) => readJsonBody(request, response, LIMIT, true), (port) => post(port, { 'content-type': 'application/json' }, body));
    t.deepEqual(broken, { status: 400, message: 'malformed JSON body' }, body);
  }
  const emptyStrict = await onServer((request, response) => readJsonBody(request, response, LIMIT, true), (port) => post(port, { 'content-type': 'application/json' }, ''));
  t.deepEqual(emptyStrict, { value: {} }, 'an empty body, strict');
  const emptyLenient = await onServer((request, response) => readJsonBody(request, response, LIMIT, false), (port) => post(port, { 'content-type': 'application/json' }, ''));
  t.deepEqual(emptyLenient, { value: '' }, 'an empty body, not strict');
});

test('a Content-Encoding named after a member of Object is an unknown coding (415)', async (t) => {
  for (const coding of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    const outcome = await onServer((request, response) => readJsonBody(request, response, LIMIT, true), (port) => post(port, { 'content-type': 'application/json', 'content-encoding': coding }, '{"a":1}'));
    t.deepEqual(outcome, { status: 415, message: 'unsupported content encoding' }, coding);
  }
});

test('an empty Content-Encoding is no coding, as for Express', async (t) => {
  const outcome = await onServer((request, response) => readJsonBody(request, response, LIMIT, true), (port) => post(port, { 'content-type': 'application/json', 'content-encoding': '' }, '{"a":1}'));
  t.deepEqual(outcome, { value: { a: 1 } });
});

test('the limit holds for the decoded bytes of a compressed body, and for the declared length of a plain one', async (t) => {
  const small = gzipSync(`{"a":"${'x'.repeat(2 * LIMIT)}"}`);
  t.true(small.length < LIMIT);
  const decoded = await onServer((request, response) => readJsonBody(request, response, LIMIT, true), (port) => post(port, { 'content-encoding': 'GZIP' }, small));
  t.deepEqual(decoded, { status: 413, message: 'request body too large' });
  const declared = await onServer((request, response) => readJsonBody(request, response, LIMIT, true), (port) => post(port, {}, `{"a":"${'x'.repeat(2 * LIMIT)}"}`));
  t.deepEqual(declared, { status: 413, message: 'request body too large' });
});
