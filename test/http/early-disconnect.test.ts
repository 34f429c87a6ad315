import { connect } from 'node:net';
import test from 'ava';
import createError from 'http-errors';
import { Router } from '../../lib/routes/router.ts';
import { collectingLogger, entryApp, listenApp } from '../helpers/koa-app.ts';
import { serviceForFile, type ServiceUnderTest } from '../helpers/service.ts';

let service: ServiceUnderTest;
serviceForFile({}, (started) => {
  service = started;
});

type LogEntry = Record<string, unknown>;

async function logEntryFor(entries: () => LogEntry[], requestId: string, message: string): Promise<LogEntry | undefined> {
  for (let waited = 0; waited < 3000; waited += 20) {
    const entry = entries().find((candidate) => candidate.requestId === requestId && candidate.msg === message);
    if (entry) return entry;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return undefined;
}

/** Starts a JSON POST that announces 1000 bytes, sends 10, and hangs up. */
function abandonLogin(requestId: string): void {
  const socket = connect(Number(new URL(service.url).port), '127.0.0.1', () => {
    socket.write(
      `POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nX-Request-Id: ${requestId}\r\n\r\n{"username"`,
    );
    setTimeout(() => socket.destroy(), 100);
  });
  socket.on('error', () => {});
}

test('a client that hangs up mid-body is its request line alone: 499, no stack, not an error', async (t) => {
  abandonLogin('gone-early-1');
  const line = await logEntryFor(service.logs, 'gone-early-1', 'request');
  t.like(line, { level: 30, status: 499, error: 'client closed the connection early' });
  t.is(line?.err, undefined, 'no error object, so no stack');
  t.is(service.logs().filter((entry) => entry.requestId === 'gone-early-1').length, 1);
});

/** The real log and error middleware over routes that fail once their answer has begun. */
async function halfAnsweringApp(t: { teardown: (fn: () => Promise<void>) => void }) {
  const { logger, logs } = collectingLogger();
  const router = new Router();
  router.add('GET', '/broken', (ctx) => {
    ctx.res.write('partial');
    throw new Error('broke mid-answer');
  });
  router.add('GET', '/cut-by-server', (ctx) => {
    ctx.res.write('partial');
    ctx.res.destroy();
    throw new Error('the file being sent could not be read');
  });
  router.add('GET', '/reset-while-waiting', async (ctx) => {
    await new Promise((resolve) => ctx.req.socket.once('close', resolve));
    throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
  });
  router.add('GET', '/refused-late', (ctx) => {
    ctx.res.write('partial');
    throw createError(400, 'refused after the answer began');
  });
  const app = entryApp({ logger, area: router.area() });
  const listening = await listenApp(app);
  t.teardown(listening.close);
  return { url: listening.url, port: Number(new URL(listening.url).port), entries: logs.entries };
}

test('a failure after the answer began, with the client still there, stays an error with its stack', async (t) => {
  const app = await halfAnsweringApp(t);
  await (await fetch(`${app.url}/broken`, { headers: { 'x-request-id': 'late-500' } })).text();
  const line = await logEntryFor(app.entries, 'late-500', 'error after the response started');
  t.is(line?.level, 50);
  t.regex(String((line?.err as { stack?: string } | undefined)?.stack), /broke mid-answer/);
});

test('a 4xx after the answer began is told on the request line, without a stack', async (t) => {
  const app = await halfAnsweringApp(t);
  await (await fetch(`${app.url}/refused-late`, { headers: { 'x-request-id': 'late-400' } })).text();
  const line = await logEntryFor(app.entries, 'late-400', 'request');
  t.is(line?.level, 30);
  t.is(line?.err, undefined);
  t.is(line?.error, 'refused after the answer began');
  t.is(app.entries().filter((entry) => entry.requestId === 'late-400').length, 1);
});

test('a failure that made the service itself cut the answer stays an error with its stack', async (t) => {
  const app = await halfAnsweringApp(t);
  await t.throwsAsync(async () => (await fetch(`${app.url}/cut-by-server`, { headers: { 'x-request-id': 'cut-500' } })).text());
  const line = await logEntryFor(app.entries, 'cut-500', 'error after the response started');
  t.is(line?.level, 50);
  t.regex(String((line?.err as { stack?: string } | undefined)?.stack), /could not be read/);
});

test('a failure the hang-up itself caused (ECONNRESET) is the same info line', async (t) => {
  const app = await halfAnsweringApp(t);
  const socket = connect(app.port, '127.0.0.1', () => {
    socket.write('GET /reset-while-waiting HTTP/1.1\r\nHost: x\r\nX-Request-Id: reset-1\r\n\r\n');
    setTimeout(() => socket.destroy(), 100);
  });
  const line = await logEntryFor(app.entries, 'reset-1', 'request');
  t.like(line, { level: 30, status: 499, error: 'client closed the connection early' });
  t.is(line?.err, undefined);
  t.deepEqual(app.entries().filter((entry) => entry.requestId === 'reset-1' && Number(entry.level) >= 50), []);
});
