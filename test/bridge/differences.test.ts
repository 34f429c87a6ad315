import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import test from 'ava';
import express from 'express';
import createError from 'http-errors';
import type { RouteHandler } from '../../lib/bridge/index.ts';
import { logEntries, MOUNT, startBridgeApp, startExpressApp, type RouteCase, type RunningApp } from '../helpers/bridge-apps.ts';
import { FIXTURES, INTERNAL_ERROR } from '../helpers/bridge-cases.ts';
import { answerOf } from '../helpers/bridge-compare.ts';
import { listenOnLoopback } from '../helpers/koa-app.ts';

/**
 * One test per by-design difference from Express 5 (docs/writing-routes.md, "Differences from
 * Express 5"): each shows what Express does, what spaceport does instead, and nothing more.
 */
const after: Array<() => Promise<void>> = [];
test.after.always(async () => {
  await Promise.all(after.map((close) => close()));
});

async function bothApps(routes: RouteCase[], bridgeOptions: Parameters<typeof startBridgeApp>[1] = {}): Promise<[RunningApp, RunningApp]> {
  const apps = await Promise.all([startExpressApp(routes), startBridgeApp(routes, bridgeOptions)]);
  after.push(...apps.map((app) => () => app.close()));
  return apps;
}

const route = (pathname: string, ...handlers: RouteHandler[]): RouteCase => ({ method: 'get', path: pathname, handlers });

test('error answers are the JSON bodies of SPEC §7 where Express renders HTML, at the same status', async (t) => {
  const [expressApp, bridge] = await bothApps([
    route('/conflict', (_req, _res, next) => next(createError(409, 'already there'))),
    route('/crash', () => {
      throw new Error('detail for the log only');
    }),
    route('/unacceptable', (_req, res) => res.format({ json: () => res.json({}) })),
    route('/fall-through', (_req, _res, next) => next()),
  ]);
  const expectations: Array<[string, RequestInit, number, unknown]> = [
    ['/conflict', {}, 409, { error: 'already there' }],
    ['/crash', {}, 500, INTERNAL_ERROR],
    ['/unacceptable', { headers: { accept: 'text/html' } }, 406, { error: 'Not Acceptable' }],
    ['/fall-through', {}, 404, { error: 'Not Found' }],
  ];
  for (const [pathname, init, status, body] of expectations) {
    const [expected, actual] = await Promise.all([answerOf(expressApp, `${MOUNT}${pathname}`, init), answerOf(bridge, `${MOUNT}${pathname}`, init)]);
    t.is(expected.status, status, `Express ${pathname}`);
    t.regex(String(expected.type), /^text\/html/);
    t.is(actual.status, status, pathname);
    t.is(actual.type, 'application/json; charset=utf-8');
    t.deepEqual(JSON.parse(actual.body), body);
    t.false(actual.body.includes('detail for the log only'));
  }
});

test('req.app and res.app are the settings alone, not an Express application; settings keep Express\'s defaults', async (t) => {
  const [expressApp, bridge] = await bothApps([
    route('/app', (req, res) => {
      const app = req.app as { get(name: string): unknown; use?: unknown; listen?: unknown };
      res.json({
        app: typeof app,
        same: Reflect.get(res, 'app') === app,
        trustProxy: app.get('trust proxy'),
        queryParser: app.get('query parser'),
        mountable: typeof app.use === 'function' || typeof app.listen === 'function',
        query: req.query,
      });
    }),
  ]);
  const pathname = `${MOUNT}/app?a[b]=1&a[b]=2`;
  const [expected, actual] = await Promise.all([answerOf(expressApp, pathname), answerOf(bridge, pathname)]);
  t.like(JSON.parse(expected.body), { app: 'function', same: true, trustProxy: false, queryParser: 'simple', mountable: true });
  t.deepEqual(JSON.parse(actual.body), { ...JSON.parse(expected.body), app: 'object', mountable: false });
});

test('no X-Powered-By header, which an Express app sends unless told not to', async (t) => {
  const plain = express();
  plain.get(`${MOUNT}/hello`, (_req, res) => void res.send('hello'));
  const expressApp = await listenOnLoopback(createServer(plain));
  const [, bridge] = await bothApps([route('/hello', (_req, res) => res.send('hello'))]);
  after.push(expressApp.close);
  const [expected, actual] = await Promise.all([fetch(`${expressApp.url}${MOUNT}/hello`), fetch(`${bridge.url}${MOUNT}/hello`)]);
  t.is(expected.headers.get('x-powered-by'), 'Express');
  t.is(actual.headers.get('x-powered-by'), null);
  t.is(await actual.text(), await expected.text());
});

test('trust proxy is http.trustProxy, a boolean: true is Express\'s `trust proxy: 1`, never an X-Forwarded-For entry the client wrote', async (t) => {
  const routes = [route('/ip', (req, res) => res.json({ ip: req.ip, ips: req.ips }))];
  const headers = { 'x-forwarded-for': '203.0.113.9, 198.51.100.7' };
  const [trustsAll, trustsOne] = await Promise.all([startExpressApp(routes, { trustProxy: true }), startExpressApp(routes, { trustProxy: 1 })]);
  const bridge = await startBridgeApp(routes, { trustProxy: true });
  after.push(trustsAll.close, trustsOne.close, bridge.close);
  const [all, one, actual] = await Promise.all([trustsAll, trustsOne, bridge].map((app) => answerOf(app, `${MOUNT}/ip`, { headers })));
  t.deepEqual(JSON.parse(all.body), { ip: '203.0.113.9', ips: ['203.0.113.9', '198.51.100.7'] });
  t.is(actual.body, one.body);
  t.deepEqual(JSON.parse(actual.body), { ip: '198.51.100.7', ips: ['198.51.100.7'] });
});

test('methods other than GET, POST, PUT and DELETE: 405 with Allow where Express answers OPTIONS itself and 404s the rest', async (t) => {
  const [expressApp, bridge] = await bothApps([route('/thing', (_req, res) => res.send('thing'))]);
  for (const [method, expressStatus] of [['OPTIONS', 200], ['PATCH', 404]] as const) {
    const [expected, actual] = await Promise.all([fetch(`${expressApp.url}${MOUNT}/thing`, { method }), fetch(`${bridge.url}${MOUNT}/thing`, { method })]);
    t.is(expected.status, expressStatus, `Express ${method}`);
    t.is(actual.status, 405, method);
    t.is(actual.headers.get('allow'), 'HEAD, GET');
    t.deepEqual(await actual.json(), { error: 'Method Not Allowed' });
  }
});

test('res.render: no view engine; a 500 whose log line names res.render and what to use instead', async (t) => {
  const [expressApp, bridge] = await bothApps([route('/page', (_req, res) => res.render('page', { title: 'x' }))]);
  const [expected, actual] = await Promise.all([answerOf(expressApp, `${MOUNT}/page`), answerOf(bridge, `${MOUNT}/page`)]);
  t.is(expected.status, 500);
  t.is(actual.status, 500);
  t.deepEqual(JSON.parse(actual.body), INTERNAL_ERROR);
  await delay(20);
  const logged = logEntries(bridge).find((entry) => entry.msg === 'unhandled error');
  t.regex(JSON.stringify(logged?.err), /res\.render is not available: spaceport has no view engine.*res\.send\(html\).*res\.sendFile\(path\)/);
});

test('a second answer is ignored and logged where Express throws ERR_HTTP_HEADERS_SENT', async (t) => {
  const reached: string[] = [];
  const twice: RouteHandler = (req, res) => {
    res.send('first');
    res.send('second');
    reached.push(String(req.get('x-app')));
  };
  const [expressApp, bridge] = await bothApps([route('/twice', twice)]);
  for (const app of [expressApp, bridge]) {
    const response = await fetch(`${app.url}${MOUNT}/twice`, { headers: { 'x-app': app === bridge ? 'bridge' : 'express' } });
    t.is(await response.text(), 'first');
  }
  await delay(20);
  t.deepEqual(reached, ['bridge'], 'in Express the second send throws and ends the handler');
  t.like(logEntries(bridge).find((entry) => entry.level === 40), { msg: 'bridged handler answered twice; later answer ignored', attempt: 'send', route: 'get /twice' });
});

test('a handler that never answers gets 504 after limits.handlerMs, where Express waits for ever', async (t) => {
  const [expressApp, bridge] = await bothApps([route('/silent', () => undefined)], { handlerMs: 150 });
  const [expected, actual] = await Promise.allSettled([
    fetch(`${expressApp.url}${MOUNT}/silent`, { signal: AbortSignal.timeout(1000) }),
    fetch(`${bridge.url}${MOUNT}/silent`, { signal: AbortSignal.timeout(10_000) }),
  ]);
  t.is(expected.status, 'rejected', 'Express has not answered after 1 s');
  t.is(actual.status === 'fulfilled' ? actual.value.status : 0, 504);
});

test('a throw in a sendFile callback fails the request (500) where it ends an Express process', async (t) => {
  const bridge = await startBridgeApp([route('/file', (_req, res) => res.sendFile(path.join(FIXTURES, 'missing.txt'), () => {
    throw new Error('callback bug');
  }))]);
  after.push(bridge.close);
  const response = await fetch(`${bridge.url}${MOUNT}/file`);
  t.is(response.status, 500);
  t.is((await fetch(`${bridge.url}${MOUNT}/file`)).status, 500, 'the service goes on');
  const script = `
    const express = require('express');
    const app = express();
    app.get('/file', (req, res) => res.sendFile(${JSON.stringify(path.join(FIXTURES, 'missing.txt'))}, () => { throw new Error('callback bug'); }));
    const server = app.listen(0, '127.0.0.1', () => fetch('http://127.0.0.1:' + server.address().port + '/file').catch(() => {}));
    setTimeout(() => process.exit(0), 3000);`;
  const child = spawnSync(process.execPath, ['-e', script], { cwd: path.resolve(import.meta.dirname, '..', '..'), encoding: 'utf8', timeout: 10_000 });
  t.is(child.status, 1, 'the Express process died of the uncaught exception');
  t.regex(child.stderr, /callback bug/);
});

test('no error-handling functions: a failure answers as SPEC §7, never through a function of the route', async (t) => {
  const fail: RouteHandler = () => {
    throw Object.assign(new Error('bad input'), { status: 400 });
  };
  // Four parameters: what makes it an error handler in Express.
  const handleError = ((error: Error, _req: unknown, res: { json: (body: unknown) => void }, _next: unknown) => res.json({ handled: error.message })) as unknown as RouteHandler;
  const [expressApp, bridge] = await bothApps([route('/guarded', fail, handleError)]);
  const [expected, actual] = await Promise.all([answerOf(expressApp, `${MOUNT}/guarded`), answerOf(bridge, `${MOUNT}/guarded`)]);
  t.deepEqual([expected.status, JSON.parse(expected.body)], [200, { handled: 'bad input' }]);
  t.deepEqual([actual.status, JSON.parse(actual.body)], [400, { error: 'bad input' }]);
});

test('bodies are parsed by the service within limits.jsonBytes (1 MiB by default), not by body-parser\'s 100 kB', async (t) => {
  const [expressApp, bridge] = await bothApps([{ method: 'post', path: '/size', handlers: [(req, res) => res.json({ length: JSON.stringify(req.body).length })] }], {
    limits: { jsonBytes: 1_048_576 },
  });
  const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'x'.repeat(200_000) }) };
  const plain = express();
  plain.post(`${MOUNT}/size`, express.json(), (req, res) => void res.json({ length: JSON.stringify(req.body).length }));
  const defaultExpress = await listenOnLoopback(createServer(plain));
  after.push(defaultExpress.close);
  t.is((await fetch(`${defaultExpress.url}${MOUNT}/size`, init)).status, 413, 'express.json() refuses over 100 kB');
  t.is((await fetch(`${expressApp.url}${MOUNT}/size`, init)).status, 413, 'the test oracle runs at the small test limit');
  const answer = await fetch(`${bridge.url}${MOUNT}/size`, init);
  t.deepEqual(await answer.json(), { length: 200_011 });
});

test('a JSON body in UTF-16 or UTF-32 is refused (415) where express.json() decodes it: JSON between systems is UTF-8 (RFC 8259 §8.1)', async (t) => {
  const [expressApp, bridge] = await bothApps([{ method: 'post', path: '/echo', handlers: [(req, res) => res.json({ body: req.body })] }]);
  const init = { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-16le' }, body: Buffer.from('{"a":"ü"}', 'utf16le') };
  const decoded = await fetch(`${expressApp.url}${MOUNT}/echo`, init);
  t.deepEqual(await decoded.json(), { body: { a: 'ü' } }, 'Express decodes it');
  const refused = await fetch(`${bridge.url}${MOUNT}/echo`, init);
  t.is(refused.status, 415);
  t.deepEqual(await refused.json(), { error: 'unsupported charset "UTF-16LE"' });
});
