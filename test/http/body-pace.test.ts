import test from 'ava';
import { once } from 'node:events';
import { connect } from 'node:net';
import path from 'node:path';
import type { Pace } from '../../lib/http/pace.ts';
import { boundUnderLoad } from '../helpers/machine-load.ts';
import { startWithProjects, writeTree } from '../helpers/projects.ts';
import { rawExchange, type RawAnswer, trickledExchange } from '../helpers/raw-http.ts';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';

/** The service's rule, shortened so that a stall shows within a second (the real one is in body-pace.heavy.test.ts). */
const PACE: Pace = { graceMs: 1000, minBytesPerSecond: 1024, checkMs: 100 };
/** How long a handler of `/holds` keeps the request without reading its body: past the grace. */
const HOLD_MS = 2500;
/** Generous on a loaded machine, yet far below Node's own 300 s. */
const ANSWER_WITHIN_MS = 8000;

const BIG_ANSWER = 8_000_000;

let service: ServiceUnderTest;
let port: number;
let projectsDir: string;
test.before(async () => {
  const root = writeTree({
    'projects/pace/api/routes.js': `export default [
  { method: 'POST', path: '/echo', skipAuth: true, function: (req, res) => res.json({ length: JSON.stringify(req.body).length }) },
  { method: 'POST', path: '/protected', function: (req, res) => res.json({ ok: true }) },
  { method: 'POST', path: '/holds', skipAuth: true, function: async (req, res) => { await new Promise((resolve) => setTimeout(resolve, ${HOLD_MS})); res.json({ held: true }); } },
  { method: 'GET', path: '/ping', skipAuth: true, function: (req, res) => res.json({ pong: true }) },
  { method: 'POST', path: '/big', skipAuth: true, function: (req, res) => res.type('text').send('x'.repeat(${BIG_ANSWER})) },
  { method: 'POST', path: '/late/:how', skipAuth: true, function: async (req, res) => {
    await new Promise((resolve) => setTimeout(resolve, ${HOLD_MS}));
    if (req.params.how === 'file') res.sendFile(import.meta.filename);
    else if (req.params.how === 'write') { res.write('late'); res.end(); }
    else res.json({ late: true });
  } },
];
`,
  });
  projectsDir = path.join(root, 'projects');
  service = await startWithProjects(undefined, projectsDir, { bodyPace: PACE });
  port = Number(new URL(service.url).port);
});
test.after.always(async () => {
  await service?.close();
  await dropTestDatabase();
});

function head(pathname: string, requestId: string, contentLength: number, type = 'application/json'): string {
  return `POST /api/pace${pathname} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: ${contentLength}\r\nX-Request-Id: ${requestId}\r\n\r\n`;
}

function jsonOf(answer: RawAnswer | undefined): unknown {
  return JSON.parse(answer?.body.toString('utf8') ?? 'null');
}

function requestLines(requestId: string): Array<Record<string, unknown>> {
  return service.logs().filter((line) => line.requestId === requestId && line.msg === 'request');
}

const STALLS: Array<[string, Buffer, number, number]> = [
  ['that stops arriving', Buffer.from('{"text":'), 8, 10],
  ['sent a byte at a time, far below the minimum rate', Buffer.from(`{"text":"${'x'.repeat(990)}"}`), 1, 200],
];

for (const [title, body, pieceBytes, intervalMs] of STALLS) {
  test(`a body ${title} is answered 408 {error} within the bound, logged, and its connection closed`, async (t) => {
    const requestId = `pace-stall-${pieceBytes}`;
    const outcome = await trickledExchange(port, head('/echo', requestId, 1000), body, { pieceBytes, intervalMs, timeoutMs: boundUnderLoad(ANSWER_WITHIN_MS) * 2 });
    t.false(outcome.timedOut, 'the server closed the connection');
    t.is(outcome.answers.length, 1);
    const [answer] = outcome.answers;
    t.is(answer?.status, 408);
    t.deepEqual(answer?.headers.get('content-type'), ['application/json; charset=utf-8']);
    t.deepEqual(answer?.headers.get('connection'), ['close']);
    t.deepEqual(jsonOf(answer), { error: 'request body timed out' });
    t.is(outcome.leftover.length, 0, 'nothing after the answer');
    t.true((outcome.firstReplyMs ?? 0) >= PACE.graceMs * 0.9, `answered after ${outcome.firstReplyMs} ms, not before the grace`);
    t.true((outcome.firstReplyMs ?? Infinity) < boundUnderLoad(ANSWER_WITHIN_MS), `answered after ${outcome.firstReplyMs} ms`);
    t.true(outcome.bytesSent < 1000);
    const lines = requestLines(requestId);
    t.is(lines.length, 1);
    t.like(lines[0], { status: 408, project: 'pace', route: 'POST /echo', error: 'request body timed out' });
  });
}

test('a body sent fast and then stopped short of its end is answered 408 within the bound, not after the time its bytes earned', async (t) => {
  // 200 KB at once earn 200 s at the minimum rate; the stall after them must still end within the grace.
  const body = Buffer.from(`{"text":"${'x'.repeat(200_000)}`);
  const requestId = 'pace-banked';
  const outcome = await trickledExchange(port, head('/echo', requestId, body.length + 10), body, { pieceBytes: body.length, intervalMs: 10, timeoutMs: Math.min(40_000, boundUnderLoad(ANSWER_WITHIN_MS) * 2) });
  t.false(outcome.timedOut, 'the server closed the connection');
  t.deepEqual(
    outcome.answers.map((answer) => answer.status),
    [408],
  );
  t.deepEqual(jsonOf(outcome.answers[0]), { error: 'request body timed out' });
  t.true((outcome.firstReplyMs ?? 0) >= PACE.graceMs * 0.9, `answered after ${outcome.firstReplyMs} ms, not before the grace`);
  t.true((outcome.firstReplyMs ?? Infinity) < boundUnderLoad(ANSWER_WITHIN_MS), `answered after ${outcome.firstReplyMs} ms`);
  t.like(requestLines(requestId)[0], { status: 408, route: 'POST /echo' });
});

test('a body sent fast and then trickled below the rate is answered 408 within the bound: the bytes sent first buy no more than the grace', async (t) => {
  // 200 KB at once would earn 200 s; a byte every 300 ms after them keeps the connection from ever being silent for the grace.
  const body = Buffer.from(`{"text":"${'x'.repeat(200_200)}"}`);
  const requestId = 'pace-banked-trickle';
  const outcome = await trickledExchange(port, head('/echo', requestId, body.length), body, { firstPieceBytes: 200_000, pieceBytes: 1, intervalMs: 300, timeoutMs: Math.min(40_000, boundUnderLoad(ANSWER_WITHIN_MS) * 2) });
  t.false(outcome.timedOut, 'the server closed the connection');
  t.deepEqual(
    outcome.answers.map((answer) => answer.status),
    [408],
  );
  t.true((outcome.firstReplyMs ?? Infinity) < boundUnderLoad(ANSWER_WITHIN_MS), `answered after ${outcome.firstReplyMs} ms`);
});

test('a protected route answers 401 without reading a slow body, then writes nothing more: the connection closes within the bound', async (t) => {
  const requestId = 'pace-401';
  const outcome = await trickledExchange(port, head('/protected', requestId, 1000), Buffer.alloc(1000, 'x'), { pieceBytes: 1, intervalMs: 200, timeoutMs: boundUnderLoad(ANSWER_WITHIN_MS) * 2 });
  t.false(outcome.timedOut, 'the server closed the connection');
  t.deepEqual(
    outcome.answers.map((answer) => answer.status),
    [401],
  );
  t.deepEqual(jsonOf(outcome.answers[0]), { error: 'authentication required' });
  t.is(outcome.leftover.length, 0, 'no second answer, nothing after the 401');
  t.true(outcome.milliseconds < boundUnderLoad(ANSWER_WITHIN_MS), `closed after ${outcome.milliseconds} ms`);
  t.true(outcome.bytesSent < 1000);
  const lines = requestLines(requestId);
  t.is(lines.length, 1);
  t.like(lines[0], { status: 401, route: 'POST /protected' });
});

test('a body that keeps arriving at the minimum rate or faster is read in full, however long it takes', async (t) => {
  const text = 'y'.repeat(6000);
  const body = Buffer.from(JSON.stringify({ text }));
  const requestHead = head('/echo', 'pace-steady', body.length).replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n');
  // 5 000 bytes a second, five times the minimum, about 1.2 s in all: at load 39 on 2 cores, the
  // client's timers fell behind three times the minimum and the body was answered 408.
  const outcome = await trickledExchange(port, requestHead, body, { pieceBytes: 500, intervalMs: 100, timeoutMs: ANSWER_WITHIN_MS * 2 });
  t.deepEqual(
    outcome.answers.map((answer) => answer.status),
    [200],
  );
  t.deepEqual(jsonOf(outcome.answers[0]), { length: JSON.stringify({ text }).length });
  t.true(outcome.milliseconds > PACE.graceMs, `took ${outcome.milliseconds} ms`);
});

test('a body the service is not reading yet is not held against the client', async (t) => {
  // A minimum rate so high that the bytes already received earn no time: only the grace is left.
  const eager = await startWithProjects(t, projectsDir, { bodyPace: { ...PACE, minBytesPerSecond: 1024 ** 3 } });
  const body = Buffer.alloc(4 * 1024 * 1024, 'z');
  const requestHead = head('/holds', 'pace-holds', body.length, 'application/octet-stream').replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n');
  const outcome = await trickledExchange(Number(new URL(eager.url).port), requestHead, body, { pieceBytes: body.length, intervalMs: 5, timeoutMs: ANSWER_WITHIN_MS * 2 });
  t.deepEqual(
    outcome.answers.map((answer) => answer.status),
    [200],
  );
  t.deepEqual(jsonOf(outcome.answers[0]), { held: true });
});

test('after a 401 whose body arrived in full, the connection serves the next request', async (t) => {
  const first = `${head('/protected', 'pace-401-kept', 2)}{}`;
  const second = 'GET /api/pace/ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
  const outcome = await rawExchange(port, Buffer.from(first + second), { timeoutMs: ANSWER_WITHIN_MS, firstIsHead: false });
  t.deepEqual(
    outcome.answers.map((answer) => answer.status),
    [401, 200],
  );
});

for (const how of ['json', 'file', 'write']) {
  test(`a handler that answers (${how}) after its stalled request was answered 408 changes nothing, and the service goes on`, async (t) => {
    const requestId = `pace-late-${how}`;
    const outcome = await trickledExchange(port, head(`/late/${how}`, requestId, 100, 'application/octet-stream'), Buffer.alloc(0), { pieceBytes: 1, intervalMs: 10, timeoutMs: ANSWER_WITHIN_MS });
    t.deepEqual(
      outcome.answers.map((answer) => answer.status),
      [408],
    );
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS + 500));
    t.is(requestLines(requestId).length, 1);
    t.is((await service.fetch('/api/pace/ping')).status, 200);
  });
}

test('after a 401, a rest of the body Node cannot parse closes the connection without a second answer', async (t) => {
  const chunkedHead = 'POST /api/pace/protected HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
  // The first chunk arrives with the 401; the broken chunk size after it.
  const outcome = await trickledExchange(port, chunkedHead, Buffer.from('2\r\n{}\r\nzz\r\n'), { pieceBytes: 7, intervalMs: 200, timeoutMs: ANSWER_WITHIN_MS });
  t.false(outcome.timedOut, 'the server closed the connection');
  t.deepEqual(
    outcome.answers.map((answer) => answer.status),
    [401],
  );
  t.is(outcome.leftover.length, 0);
});

test('a rest of the body Node cannot parse, after an answer still being written, lets that answer finish before the connection closes', async (t) => {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await once(socket, 'connect');
  // The body is not one the service parses: the route answers without reading it.
  socket.write('POST /api/pace/big HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n');
  // Not reading: the answer fills the buffers and waits. Then the rest of the body is broken.
  socket.pause();
  await new Promise((resolve) => setTimeout(resolve, 500));
  socket.write('zz\r\n');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.resume();
  await once(socket, 'close');
  const received = Buffer.concat(chunks).toString('latin1');
  t.regex(received, /^HTTP\/1\.1 200 /);
  const body = received.slice(received.indexOf('\r\n\r\n') + 4);
  t.is(body.length, BIG_ANSWER, 'the whole answer arrived before the connection closed');
});

test('a request answered in the same turn as Node reports the rest of its packet broken still gets that answer', async (t) => {
  // The tenant is known (cached), so the answer is decided at once, before Node parses on.
  t.is((await service.fetch('/api/pace/ping')).status, 200);
  const outcome = await rawExchange(port, Buffer.from('DELETE * HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\nConnection: close\r\n\r\n'), { timeoutMs: ANSWER_WITHIN_MS, firstIsHead: false });
  t.false(outcome.timedOut);
  t.is(outcome.answers.length, 1, outcome.received.toString('latin1'));
});
