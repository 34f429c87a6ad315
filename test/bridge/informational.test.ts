import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import test from 'ava';
import type { RouteHandler } from '../../lib/bridge/index.ts';
import { logEntries, MOUNT, startBridgeApp, startExpressApp, type RouteCase, type RunningApp } from '../helpers/bridge-apps.ts';
import { FIXTURES, INTERNAL_ERROR } from '../helpers/bridge-cases.ts';
import { rawExchange, type RawOutcome } from '../helpers/raw-http.ts';

/**
 * 1xx answers (SPEC §7, §10). A status of 100-199 set by a handler as its answer's is an error:
 * Express 5 (Node, really) sends it as if it were final, `HTTP/1.1 100` and then nothing, so a
 * client on a kept-alive connection takes the next answer for this one. spaceport answers 500
 * instead, and logs it. Node's interim answers, `writeContinue`, `writeProcessing` and
 * `writeEarlyHints`, written ahead of the real answer, go out as under Express.
 */
const routes: RouteCase[] = [];
const route = (name: string, handler: RouteHandler): string => {
  routes.push({ method: 'get', path: `/${name}`, handlers: [handler] });
  return `${MOUNT}/${name}`;
};

const HELLO = route('hello', (_req, res) => res.send('hello'));
/** Each way a handler may give its answer a 1xx status. */
const INFORMATIONAL_FINALS: Record<string, string> = {
  'res.status(100).send()': route('status-send', (_req, res) => res.status(100).send('not final')),
  'res.sendStatus(103)': route('send-status', (_req, res) => res.sendStatus(103)),
  'res.writeHead(101).end()': route('write-head', (_req, res) => res.writeHead(101, { upgrade: 'nothing' }).end('not final')),
  'res.statusCode = 199, then end()': route('status-code', (_req, res) => {
    res.statusCode = 199;
    res.end('not final');
  }),
  'res.status(102).json() from a timer': route('later', (_req, res) => {
    setTimeout(() => res.status(102).json({ late: true }), 5);
  }),
  'res.status(100).sendFile()': route('file', (_req, res) => res.status(100).sendFile(path.join(FIXTURES, 'hello.txt'))),
};
const INTERIM = {
  'res.writeEarlyHints()': route('early-hints', (_req, res) => {
    res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
    res.send('after the hints');
  }),
  'res.writeContinue()': route('continue', (_req, res) => {
    res.writeContinue();
    res.send('after continue');
  }),
  'res.writeProcessing()': route('processing', (_req, res) => {
    res.writeProcessing();
    setTimeout(() => res.json({ done: true }), 5);
  }),
};
const LATE_HINTS = route('late-hints', (_req, res) => {
  res.send('answered');
  res.writeEarlyHints({ link: '</late.css>; rel=preload' });
});

let express: RunningApp;
let bridge: RunningApp;
test.before(async () => {
  [express, bridge] = await Promise.all([startExpressApp(routes), startBridgeApp(routes)]);
});
test.after.always(async () => {
  await Promise.all([express?.close(), bridge?.close()]);
});

/** `first`, then `GET /hello`, on one kept-alive connection: what came back, the interim answers' head lines, and the final answers. */
async function thenHello(app: RunningApp, first: string, requestId = 'first'): Promise<RawOutcome & { interim: string[] }> {
  const request = `GET ${first} HTTP/1.1\r\nHost: loopback\r\nX-Request-Id: ${requestId}\r\n\r\nGET ${HELLO} HTTP/1.1\r\nHost: loopback\r\nConnection: close\r\n\r\n`;
  const outcome = await rawExchange(Number(new URL(app.url).port), Buffer.from(request), { timeoutMs: 10_000, firstIsHead: false });
  const interim = outcome.received
    .toString('latin1')
    .split('\r\n')
    .filter((line) => /^HTTP\/1\.1 1\d\d /.test(line));
  return { ...outcome, interim };
}

for (const [call, pathname] of Object.entries(INFORMATIONAL_FINALS)) {
  test(`${call}: Express sends a 1xx as the answer and the next answer is taken for it; spaceport answers 500, logged, and the next answer is its own`, async (t) => {
    const underExpress = await thenHello(express, pathname);
    if (!call.includes('sendFile') && !call.includes('timer')) {
      t.is(underExpress.interim.length, 1, 'Express: the 1xx goes out as the only head of the first request');
      t.is(underExpress.answers.length, 1, 'Express: one final answer for two requests');
    }

    const requestId = `informational-${pathname.split('/').at(-1)}`;
    const underBridge = await thenHello(bridge, pathname, requestId);
    t.false(underBridge.timedOut);
    t.deepEqual(underBridge.interim, [], 'no 1xx on the wire');
    t.deepEqual(
      underBridge.answers.map((answer) => answer.status),
      [500, 200],
    );
    t.deepEqual(JSON.parse(underBridge.answers[0]?.body.toString() ?? ''), INTERNAL_ERROR);
    t.is(underBridge.answers[1]?.body.toString(), 'hello');
    t.is(underBridge.leftover.length, 0);
    await delay(20);
    const logged = logEntries(bridge).find((entry) => entry.requestId === requestId && entry.level === 50);
    t.regex(String((logged?.err as { message?: string } | undefined)?.message), /status 1\d\d is informational/);
    t.like(
      logEntries(bridge).find((entry) => entry.requestId === requestId && entry.msg === 'request'),
      { status: 500 },
    );
    t.deepEqual(
      logEntries(bridge)
        .filter((entry) => entry.requestId === requestId && entry.level === 40)
        .map((entry) => entry.attempt),
      call.startsWith('res.writeHead') ? ['end'] : [],
      'one failure; only an end called after the refused head is reported as ignored',
    );
  });
}

for (const [call, pathname] of Object.entries(INTERIM)) {
  test(`${call}: an interim answer ahead of the real one, as under Express`, async (t) => {
    const [underExpress, underBridge] = await Promise.all([thenHello(express, pathname), thenHello(bridge, pathname)]);
    t.true(underExpress.interim.length === 1);
    t.deepEqual(underBridge.interim, underExpress.interim);
    const expressHints = underExpress.received.toString('latin1').match(/^Link: .*$/m)?.[0];
    t.is(underBridge.received.toString('latin1').match(/^Link: .*$/m)?.[0], expressHints);
    t.deepEqual(
      underBridge.answers.map((answer) => [answer.status, answer.body.toString()]),
      underExpress.answers.map((answer) => [answer.status, answer.body.toString()]),
    );
  });
}

test('an interim answer after the answer is ignored and logged, never written into the body', async (t) => {
  const outcome = await thenHello(bridge, LATE_HINTS, 'late-hints');
  t.deepEqual(outcome.interim, []);
  t.deepEqual(
    outcome.answers.map((answer) => [answer.status, answer.body.toString()]),
    [
      [200, 'answered'],
      [200, 'hello'],
    ],
  );
  await delay(20);
  t.like(
    logEntries(bridge).find((entry) => entry.requestId === 'late-hints' && entry.level === 40),
    { attempt: 'writeEarlyHints' },
  );
});

test('an HTTP/1.0 client gets no interim answer, which it would take for the answer (Express sends it)', async (t) => {
  const request = `GET ${INTERIM['res.writeEarlyHints()']} HTTP/1.0\r\nHost: loopback\r\n\r\n`;
  const [underExpress, underBridge] = await Promise.all(
    [express, bridge].map((app) => rawExchange(Number(new URL(app.url).port), Buffer.from(request), { timeoutMs: 10_000, firstIsHead: false })),
  );
  t.regex(underExpress?.received.toString('latin1') ?? '', /^HTTP\/1\.1 103 Early Hints\r\n/);
  t.regex(underBridge?.received.toString('latin1') ?? '', /^HTTP\/1\.1 200 OK\r\n/);
  t.deepEqual(
    underBridge?.answers.map((answer) => [answer.status, answer.body.toString()]),
    [[200, 'after the hints']],
  );
});
