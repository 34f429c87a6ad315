import test, { type ExecutionContext } from 'ava';
import { once } from 'node:events';
import { connect, createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { createServer, type Server } from 'node:http';
import fc from 'fast-check';
import createError from 'http-errors';
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import { jsonBody } from '../../lib/routes/json-body.ts';
import { Router } from '../../lib/routes/router.ts';
import type { CollectedLogs } from '../../lib/testing/logs.ts';
import { databaseProxy } from '../helpers/database-proxy.ts';
import { collectingLogger, entryApp } from '../helpers/koa-app.ts';
import { boundUnderLoad } from '../helpers/machine-load.ts';
import { serveOver, serviceForFile, startTestService, testDatabaseUrl, type ServiceUnderTest } from '../helpers/service.ts';

let service: ServiceUnderTest;
serviceForFile({}, (started) => {
  service = started;
});

/** The real error and log middleware in a bare Koa app, with routes that fail on purpose. */
async function errorApp(): Promise<{ url: string; logs: CollectedLogs; server: Server }> {
  const { logger, logs } = collectingLogger();
  const router = new Router();
  const echo: Middleware = (ctx) => {
    ctx.body = ctx.request.body;
  };
  router.add('POST', '/echo', compose([jsonBody(64), echo]));
  router.add('GET', '/crash', () => {
    throw new Error('secret internals: password=hunter2');
  });
  router.add('GET', '/teapot', () => {
    throw createError(418, 'short and stout', { headers: { 'X-Brew': 'green' } });
  });
  router.add('GET', '/typed-then-crash', (ctx) => {
    ctx.type = 'text/html';
    throw new Error('boom');
  });
  const app = entryApp({ logger, area: router.area() });
  const server = createServer(app.callback()).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, logs, server };
}

test('malformed JSON is 400, an oversized body 413', async (t) => {
  const app = await errorApp();
  t.teardown(() => app.server.close());
  const headers = { 'content-type': 'application/json' };
  const bad = await fetch(`${app.url}/echo`, { method: 'POST', headers, body: '{"a":' });
  t.is(bad.status, 400);
  t.deepEqual(await bad.json(), { error: 'malformed JSON body' });
  const big = await fetch(`${app.url}/echo`, { method: 'POST', headers, body: JSON.stringify({ a: 'x'.repeat(200) }) });
  t.is(big.status, 413);
  t.deepEqual(await big.json(), { error: 'request body too large' });
  const good = await fetch(`${app.url}/echo`, { method: 'POST', headers, body: '{"a":1}' });
  t.deepEqual(await good.json(), { a: 1 });
  const declaredUtf8 = await fetch(`${app.url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json; charset="UTF-8"' }, body: '{"a":"ü"}' });
  t.deepEqual(await declaredUtf8.json(), { a: 'ü' });
});

test('a JSON body in another charset than UTF-8 is 415, the charset named, never read as UTF-8', async (t) => {
  const app = await errorApp();
  t.teardown(() => app.server.close());
  for (const charset of ['latin1', 'utf-16', 'windows-1252']) {
    const refused = await fetch(`${app.url}/echo`, { method: 'POST', headers: { 'content-type': `application/json; charset=${charset}` }, body: '{"a":1}' });
    t.is(refused.status, 415, charset);
    t.deepEqual(await refused.json(), { error: `unsupported charset "${charset.toUpperCase()}"` });
  }
});

test('an uncaught error is 500 without its text, logged with stack and request id', async (t) => {
  const app = await errorApp();
  t.teardown(() => app.server.close());
  const response = await fetch(`${app.url}/crash`, { headers: { 'x-request-id': 'req-500' } });
  t.is(response.status, 500);
  t.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
  t.deepEqual(await response.json(), { success: false, message: 'Internal Server Error' });
  const logged = app.logs.entries().find((entry) => entry.msg === 'unhandled error') as { requestId: string; err: { stack: string } };
  t.is(logged.requestId, 'req-500');
  t.regex(logged.err.stack, /secret internals/);
});

test('an exposed 4xx error keeps its message and headers', async (t) => {
  const app = await errorApp();
  t.teardown(() => app.server.close());
  const response = await fetch(`${app.url}/teapot`);
  t.is(response.status, 418);
  t.is(response.headers.get('x-brew'), 'green');
  t.deepEqual(await response.json(), { error: 'short and stout' });
});

test('an error answer is JSON whatever type was set before', async (t) => {
  const app = await errorApp();
  t.teardown(() => app.server.close());
  const response = await fetch(`${app.url}/typed-then-crash`);
  t.is(response.status, 500);
  t.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
});

test('an unknown path is 404 Not Found', async (t) => {
  const response = await service.fetch('/no/such/path');
  t.is(response.status, 404);
  t.deepEqual(await response.json(), { error: 'Not Found' });
});

test('a known path with another method is 405 with Allow', async (t) => {
  const response = await service.fetch('/healthz', { method: 'POST' });
  t.is(response.status, 405);
  t.is(response.headers.get('allow'), 'HEAD, GET');
  t.deepEqual(await response.json(), { error: 'Method Not Allowed' });
});

test('healthz is 200 with the database up', async (t) => {
  // Its probe has 1.5 s: at load 39 on 2 cores the database took longer, and it was 503 (asked again, up to 20 s).
  let response = await service.fetch('/healthz');
  for (const deadline = Date.now() + 20_000; response.status !== 200 && Date.now() < deadline; ) response = await service.fetch('/healthz');
  t.is(response.status, 200);
  t.deepEqual(await response.json(), { status: 'ok' });
});

test('every response carries X-Request-Id: the caller\'s when valid, else a UUID', async (t) => {
  const kept = await service.fetch('/healthz', { headers: { 'x-request-id': 'abc.DEF_1:2-3' } });
  t.is(kept.headers.get('x-request-id'), 'abc.DEF_1:2-3');
  for (const offered of ['has space', 'x'.repeat(129), 'semi;colon']) {
    const replaced = await service.fetch('/healthz', { headers: { 'x-request-id': offered } });
    t.regex(replaced.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  }
  const errored = await service.fetch('/nope', { headers: { tenant: '!' } });
  t.regex(errored.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
});

/** SPEC §2.4: 1 to 128 characters of `[A-Za-z0-9._:-]`. */
const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

test('property: a caller\'s X-Request-Id is kept exactly when it is 1 to 128 characters of [A-Za-z0-9._:-]', async (t) => {
  const allowed = [...'abcXYZ0189._:-'];
  // What a header may carry besides: space, tab, punctuation, a character beyond ASCII (sent as its latin1 byte).
  const refused = [' ', '\t', ';', ',', '/', '"', '+', '=', '~', '%', '\u00e9'];
  const offered = fc.oneof(
    fc.array(fc.constantFrom(...allowed), { minLength: 1, maxLength: 140 }).map((characters) => characters.join('')),
    fc.tuple(fc.array(fc.constantFrom(...allowed), { maxLength: 20 }), fc.constantFrom(...refused), fc.array(fc.constantFrom(...allowed), { maxLength: 20 })).map(([before, odd, after]) => `${before.join('')}${odd}${after.join('')}`.trim()),
  );
  await fc.assert(
    fc.asyncProperty(offered, async (requestId) => {
      const response = await service.fetch('/livez', { headers: { 'x-request-id': requestId } });
      await response.arrayBuffer();
      const answered = response.headers.get('x-request-id') ?? '';
      return WELL_FORMED_REQUEST_ID.test(requestId) ? answered === requestId : answered !== requestId && /^[0-9a-f-]{36}$/.test(answered);
    }),
    { numRuns: 150 },
  );
  for (const [requestId, kept] of [['a', true], ['x'.repeat(128), true], ['x'.repeat(129), false], ['', false]] as const) {
    const answered = (await service.fetch('/livez', { headers: { 'x-request-id': requestId } })).headers.get('x-request-id');
    t.is(answered === requestId, kept, `${requestId.length} characters`);
  }
  const twice = new Headers([
    ['x-request-id', 'first'],
    ['x-request-id', 'second'],
  ]);
  t.regex((await service.fetch('/livez', { headers: twice })).headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/, 'two ids are none');
});

test('one JSON log line per request with method, url, status, ms, tenant and request id', async (t) => {
  // /livez asks nothing of the database, whose answer may be late on a busy machine.
  await service.fetch('/livez?probe=1', { headers: { 'x-request-id': 'log-line-1' } });
  await new Promise((resolve) => setTimeout(resolve, 20));
  const lines = service.logs().filter((entry) => entry.requestId === 'log-line-1');
  t.is(lines.length, 1);
  t.like(lines[0], { method: 'GET', url: '/livez?probe=1', status: 200 });
  t.is(typeof lines[0].ms, 'number');
});

test('credentials in the query string do not reach the log; the rest of the URL is logged as received', async (t) => {
  const names = ['usertoken', 'access_token', 'pass', 'pwd', 'jwt', 'auth', 'sig', 'api%5Fkey', 'session', 'code', 'ticket', 'bearer'];
  const query = names.map((name, index) => `${name}=s3cret-${index}`).join('&');
  await service.fetch(`/x?${query}&page=2&a=%22%7D%5Cx`, { headers: { 'x-request-id': 'log-line-2' } });
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.false(service.logText().includes('s3cret'));
  const line = service.logs().find((entry) => entry.requestId === 'log-line-2' && entry.msg === 'request');
  t.is(line?.url, `/x?${names.map((name) => `${name}=[redacted]`).join('&')}&page=2&a=%22%7D%5Cx`);
});

test('a token in the query string does not reach the log whatever its name: a value shaped like a JWT is redacted', async (t) => {
  const token = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from('{"uid":"s3cret-user"}').toString('base64url')}.c2lnbmF0dXJl`;
  await service.fetch(`/x?t=${token}&state=${token.replaceAll('.', '%2E')}&page=eyJ-not-a-token&v=a.b.c`, { headers: { 'x-request-id': 'log-line-jwt' } });
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.false(service.logText().includes(token.split('.')[1] as string));
  const line = service.logs().find((entry) => entry.requestId === 'log-line-jwt' && entry.msg === 'request');
  t.is(line?.url, '/x?t=[redacted]&state=[redacted]&page=eyJ-not-a-token&v=a.b.c');
});

test('one log line per request: a 4xx is told on it, no other line', async (t) => {
  await service.fetch('/nowhere', { headers: { 'x-request-id': 'one-line-404' } });
  await service.fetch('/healthz', { method: 'DELETE', headers: { 'x-request-id': 'one-line-405' } });
  await new Promise((resolve) => setTimeout(resolve, 20));
  const lines = (id: string) => service.logs().filter((entry) => entry.requestId === id);
  t.deepEqual(lines('one-line-404').map((entry) => [entry.msg, entry.status, entry.error]), [['request', 404, 'Not Found']]);
  t.deepEqual(lines('one-line-405').map((entry) => [entry.msg, entry.status, entry.error]), [['request', 405, 'Method Not Allowed']]);
});

async function silentTcpServer(): Promise<{ port: number; server: TcpServer }> {
  const server = createTcpServer(() => {});
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, server };
}

test('with the database unreachable, healthz and tenant lookups answer 503 within 2 s', async (t) => {
  const closedPort = await silentTcpServer();
  closedPort.server.close();
  const down = await startDownService(t, `postgres://postgres@127.0.0.1:${closedPort.port}/x`);
  for (const path of ['/healthz', '/anything']) {
    const started = Date.now();
    const response = await fetch(`${down.url}${path}`, { headers: { tenant: 'fresh-tenant' } });
    t.is(response.status, 503, path);
    t.deepEqual(await response.json(), { error: 'database unavailable' });
    t.true(Date.now() - started < boundUnderLoad(2000), `${path} took ${Date.now() - started} ms`);
  }
});

test('with a database that accepts but never answers, healthz is 503 within 2 s', async (t) => {
  const blackHole = await silentTcpServer();
  t.teardown(() => blackHole.server.close());
  const down = await startDownService(t, `postgres://postgres@127.0.0.1:${blackHole.port}/x`);
  const started = Date.now();
  const response = await fetch(`${down.url}/healthz`);
  t.is(response.status, 503);
  t.true(Date.now() - started < boundUnderLoad(2000), `took ${Date.now() - started} ms`);
});

test('a database that stops answering on open connections is 503 within 2 s, not a hang, and the service recovers', async (t) => {
  const proxy = await databaseProxy(await testDatabaseUrl());
  const relayed = await startTestService(t, { databaseUrl: proxy.url });
  t.teardown(() => proxy.close());
  const login = () =>
    relayed.fetch('/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"username":"nobody","password":"x"}' });
  // Both open their connections (the pool's, the health check's own) before the freeze.
  t.is((await login()).status, 401);
  t.is((await relayed.fetch('/healthz')).status, 200);
  proxy.freeze();
  for (const attempt of [login, () => relayed.fetch('/healthz')]) {
    const started = Date.now();
    const response = await attempt();
    t.is(response.status, 503);
    t.deepEqual(await response.json(), { error: 'database unavailable' });
    t.true(Date.now() - started < boundUnderLoad(2000), `took ${Date.now() - started} ms`);
  }
  proxy.thaw();
  t.is((await login()).status, 401);
});

test('a database dropped under the service is 503 database unavailable, as an unreachable one is, not 500', async (t) => {
  const { createMigratedDatabase, testKnex } = await import('../helpers/database.ts');
  const database = await createMigratedDatabase();
  const service = await startTestService(t, { databaseUrl: database.url });
  const login = () => service.fetch('/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"username":"nobody","password":"x"}' });
  t.is((await login()).status, 401);
  const owner = testKnex(await testDatabaseUrl());
  t.teardown(() => owner.destroy());
  await owner.raw(`drop database "${new URL(database.url).pathname.slice(1)}" with (force)`);
  for (const attempt of [login, () => service.fetch('/healthz')]) {
    const response = await attempt();
    t.is(response.status, 503);
    t.deepEqual(await response.json(), { error: 'database unavailable' });
  }
});

/** A service whose database goes away after start-up: migrations run first on the real one. */
async function startDownService(t: ExecutionContext, deadUrl: string) {
  const started = await startTestService(t);
  const { createKnex } = await import('../../lib/db/connect.ts');
  const { TenantDirectory } = await import('../../lib/tenancy/index.ts');
  const { TenantDatabase } = await import('../../lib/db/tenant-database.ts');
  const knex = createKnex(deadUrl);
  const tenantDatabase = new TenantDatabase(deadUrl, { queryTimeoutMs: 1500 });
  const runtime = { ...started.runtime, knex, tenantDatabase, tenants: new TenantDirectory(tenantDatabase) };
  return { url: await serveOver(t, runtime, () => knex.destroy(), () => tenantDatabase.close()) };
}

test('a request the HTTP parser refuses still gets a JSON error, an X-Request-Id and a log line', async (t) => {
  const port = Number(new URL(service.url).port);
  const cases: Array<[string, number]> = [
    // The HTTP/2 preface: with a version it is a parser error; without, Node hands it over and
    // then drops the connection, so it must be answered before the app would go async.
    ['PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 400],
    ['PRI /healthz\r\nHost: x\r\n\r\n', 400],
    ['PRI /api/sample/heartbeat?__proto__=x\r\nHost: x\r\nConnection: close\r\n\r\n', 400],
    ['GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n', 400],
    ['GET /hea lthz HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
  ];
  for (const [request, status] of cases) {
    const answer = await rawExchange(port, request);
    const [head = '', body] = answer.split('\r\n\r\n');
    t.regex(head, new RegExp(`^HTTP/1.1 ${status} `));
    t.regex(head, /\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
    const requestId = /\r\nx-request-id: ([0-9a-f-]{36})/i.exec(head)?.[1];
    t.truthy(requestId);
    t.deepEqual(Object.keys(JSON.parse(body ?? '')), ['error']);
    await new Promise((resolve) => setTimeout(resolve, 20));
    t.like(service.logs().find((entry) => entry.requestId === requestId), { status, msg: 'request' });
  }
});

test('a PRI request pipelined after one still unanswered closes the connection without an answer out of order', async (t) => {
  const port = Number(new URL(service.url).port);
  // Node destroys the connection on PRI whatever the service does; a 400 written then would
  // reach the client as the answer to its GET.
  const answer = await rawExchange(port, 'GET /api/sample/heartbeat HTTP/1.1\r\nHost: x\r\n\r\nPRI /healthz\r\nHost: x\r\n\r\n');
  t.notRegex(answer, /^HTTP\/1\.1 400 /m);
});

/** Sends raw bytes and reads until the server closes the connection. */
async function rawExchange(port: number, request: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.write(request);
  await once(socket, 'close');
  return Buffer.concat(chunks).toString('utf8');
}
