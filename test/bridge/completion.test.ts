import path from 'node:path';
import test from 'ava';
import { setTimeout as delay } from 'node:timers/promises';
import { logEntries, MOUNT, startBridgeApp, startExpressApp, type RouteCase, type RunningApp } from '../helpers/bridge-apps.ts';
import { FIXTURES } from '../helpers/bridge-cases.ts';

/**
 * When a bridged handler is over (SPEC §10.1-§10.2): not when its function returns but when it
 * answers or calls `next`; the time limit; second answers and late failures, which are ignored
 * and logged; a client that leaves first.
 */
const HANDLER_MS = 200;
let lateAnswers = 0;
const lateHeaderErrors: Array<string | undefined> = [];

const routes: RouteCase[] = [
  { method: 'get', path: '/silent', handlers: [() => undefined] },
  {
    method: 'get',
    path: '/too-late',
    handlers: [
      (_req, res) => {
        setTimeout(() => {
          res.set('X-Late', 'yes');
          res.json({ late: true });
          lateAnswers++;
        }, HANDLER_MS * 2);
      },
    ],
  },
  {
    method: 'get',
    path: '/slow-stream',
    handlers: [
      (_req, res) => {
        res.write('started;');
        setTimeout(() => res.end('finished'), HANDLER_MS * 2);
      },
    ],
  },
  {
    method: 'get',
    path: '/to-koa',
    handlers: [
      (_req, res, next) => {
        res.status(201);
        next();
      },
    ],
    koaTail: (ctx) => {
      ctx.body = 'from koa';
    },
  },
  {
    method: 'get',
    path: '/to-koa-json',
    handlers: [(_req, _res, next) => setTimeout(next, 10)],
    koaTail: (ctx) => {
      ctx.body = { tail: true };
    },
  },
  {
    method: 'get',
    path: '/twice-from-timer',
    handlers: [
      (_req, res) =>
        void setTimeout(() => {
          res.status(202).send('first');
          res.send('second');
          res.json({ third: true });
          try {
            res.set('X-Late', 'yes');
          } catch (error) {
            lateHeaderErrors.push((error as { code?: string }).code);
          }
          res.end();
        }, 10),
    ],
  },
  {
    method: 'get',
    path: '/fail-after-answer',
    handlers: [
      async (_req, res) => {
        res.json({ answered: true });
        throw new Error('broke after answering');
      },
    ],
  },
  {
    method: 'get',
    path: '/crash',
    handlers: [
      () => {
        throw new Error('internal detail, password=hunter2');
      },
    ],
  },
  {
    method: 'get',
    path: '/next-twice',
    handlers: [
      (_req, res, next) => {
        res.send('answered');
        next();
      },
    ],
  },
  {
    method: 'get',
    path: '/left',
    handlers: [(_req, res) => void setTimeout(() => res.json({ nobody: 'listening' }), 150)],
  },
  {
    method: 'get',
    path: '/file-callback-throws',
    handlers: [
      (_req, res) =>
        res.sendFile(path.join(FIXTURES, 'hello.txt'), () => {
          throw new Error('bug in the callback, after the file');
        }),
    ],
  },
  {
    method: 'get',
    path: '/missing-file-callback-throws',
    handlers: [
      (_req, res) =>
        res.sendFile(path.join(FIXTURES, 'missing.txt'), () => {
          throw new Error('bug in the callback, before any answer');
        }),
    ],
  },
  {
    method: 'get',
    path: '/addresses',
    handlers: [(req, res) => res.json({ ip: req.ip, ips: req.ips, protocol: req.protocol, secure: req.secure, hostname: req.hostname })],
  },
];

let bridge: RunningApp;
test.before(async () => {
  bridge = await startBridgeApp(routes, { handlerMs: HANDLER_MS });
});
test.after.always(async () => {
  await bridge?.close();
});

const get = (pathname: string, init?: RequestInit) => fetch(`${bridge.url}${MOUNT}${pathname}`, init);
const warnings = (requestId: string | null) => logEntries(bridge).filter((entry) => entry.requestId === requestId && entry.level === 40);

test('a handler that neither answers nor calls next is 504 after limits.handlerMs', async (t) => {
  const started = performance.now();
  const response = await get('/silent');
  t.is(response.status, 504);
  t.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
  t.deepEqual(await response.json(), { error: 'the handler did not answer in time' });
  t.true(performance.now() - started < 5000, 'well within a generous bound');
});

test('an answer after the time limit is ignored and logged, header changes too: the service answered', async (t) => {
  const response = await get('/too-late');
  t.is(response.status, 504);
  const requestId = response.headers.get('x-request-id');
  while (lateAnswers === 0) await delay(20);
  t.deepEqual(warnings(requestId).map((entry) => [entry.attempt, entry.first]), [['set X-Late', 'failed'], ['json', 'failed']]);
});

test('a response begun before the limit is not cut by it', async (t) => {
  const response = await get('/slow-stream');
  t.is(response.status, 200);
  t.is(await response.text(), 'started;finished');
});

test('next() continues the Koa chain, which keeps its own defaults', async (t) => {
  const text = await get('/to-koa');
  t.is(text.status, 200, 'a status set before next() does not leak');
  t.is(text.headers.get('content-type'), 'text/plain; charset=utf-8');
  t.is(await text.text(), 'from koa');
  const json = await get('/to-koa-json');
  t.deepEqual(await json.json(), { tail: true });
});

test('a second answer, even from a timer, is ignored and logged; a header change throws as in Express', async (t) => {
  const response = await get('/twice-from-timer');
  t.is(response.status, 202);
  t.is(response.headers.get('x-late'), null);
  t.is(await response.text(), 'first');
  const attempts = warnings(response.headers.get('x-request-id')).map((entry) => entry.attempt);
  t.deepEqual(attempts, ['send', 'json', 'end']);
  t.deepEqual(lateHeaderErrors, ['ERR_HTTP_HEADERS_SENT']);
});

test('next() after answering is ignored and logged', async (t) => {
  const response = await get('/next-twice');
  t.is(await response.text(), 'answered');
  t.deepEqual(warnings(response.headers.get('x-request-id')).map((entry) => entry.attempt), ['next()']);
});

test('a failure after the answer keeps the answer and is logged with its stack', async (t) => {
  const response = await get('/fail-after-answer');
  t.is(response.status, 200);
  t.deepEqual(await response.json(), { answered: true });
  await delay(20);
  const requestId = response.headers.get('x-request-id');
  const logged = logEntries(bridge).find((entry) => entry.requestId === requestId && entry.level === 50);
  t.regex(String((logged?.err as { stack?: string } | undefined)?.stack), /broke after answering/);
});

test('an uncaught error is 500 without its text, logged with its stack and request id', async (t) => {
  const response = await get('/crash', { headers: { 'x-request-id': 'h3-crash' } });
  t.is(response.status, 500);
  const body = await response.text();
  t.false(body.includes('hunter2'));
  t.deepEqual(JSON.parse(body), { success: false, message: 'Internal Server Error' });
  const logged = logEntries(bridge).find((entry) => entry.requestId === 'h3-crash' && entry.msg === 'unhandled error');
  t.regex(String((logged?.err as { stack?: string } | undefined)?.stack), /internal detail/);
});

test('a client that leaves before the answer ends the handler quietly', async (t) => {
  const controller = new AbortController();
  const pending = get('/left', { signal: controller.signal, headers: { 'x-request-id': 'h3-left' } });
  await delay(50);
  controller.abort();
  await t.throwsAsync(pending);
  await delay(250);
  t.deepEqual(warnings('h3-left'), [], 'the answer nobody receives is not a second answer');
  const after = await get('/to-koa-json');
  t.is(after.status, 200, 'the service goes on');
});

test('a sendFile callback that throws is a handler failure, not the end of the service', async (t) => {
  // An app of their own, with the default limits.handlerMs: on a busy machine sending the file
  // took longer than the 200 ms of the others, and the answer was 504 (issue 37, point 9).
  const files = await startBridgeApp(routes.filter(({ path: route }) => route.endsWith('callback-throws') || route === '/to-koa-json'));
  t.teardown(() => files.close());
  const getFile = (pathname: string, init?: RequestInit) => fetch(`${files.url}${MOUNT}${pathname}`, init);
  const sent = await getFile('/file-callback-throws', { headers: { 'x-request-id': 'h3-callback-sent' } });
  t.is(sent.status, 200);
  t.is(await sent.text(), 'hello world, from a file on disk\n');
  const unanswered = await getFile('/missing-file-callback-throws', { headers: { 'x-request-id': 'h3-callback-unanswered' } });
  t.is(unanswered.status, 500);
  t.deepEqual(await unanswered.json(), { success: false, message: 'Internal Server Error' });
  await delay(20);
  const logged = (requestId: string) => logEntries(files).find((entry) => entry.requestId === requestId && entry.level === 50);
  t.regex(String((logged('h3-callback-sent')?.err as { stack?: string } | undefined)?.stack), /after the file/);
  t.regex(String((logged('h3-callback-unanswered')?.err as { stack?: string } | undefined)?.stack), /before any answer/);
  t.is((await getFile('/to-koa-json')).status, 200, 'the service goes on');
});

test('req.ip, ips and protocol follow X-Forwarded-* only when trusting the proxy, as in Express', async (t) => {
  const proxyRoutes = routes.filter((route) => route.path === '/addresses');
  const headers = { 'x-forwarded-for': '203.0.113.9, 198.51.100.7', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'public.example.com' };
  for (const trustProxy of [false, true]) {
    // The service's `http.trustProxy: true` is Express's `trust proxy: 1`: one proxy in front.
    const [express, trusting] = await Promise.all([startExpressApp(proxyRoutes, { trustProxy: trustProxy ? 1 : false }), startBridgeApp(proxyRoutes, { trustProxy })]);
    try {
      const [expected, actual] = await Promise.all(
        [express, trusting].map(async (app) => (await fetch(`${app.url}${MOUNT}/addresses`, { headers })).json()),
      );
      t.deepEqual(actual, expected, `trustProxy ${trustProxy}`);
    } finally {
      await Promise.all([express.close(), trusting.close()]);
    }
  }
});
