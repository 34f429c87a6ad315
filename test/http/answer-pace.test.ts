import test from 'ava';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import type { AnswerStall } from '../../lib/http/answer-stall.ts';
import { boundUnderLoad } from '../helpers/machine-load.ts';
import { startWithProjects, writeTree } from '../helpers/projects.ts';
import { scratchFolder } from '../helpers/scratch.ts';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';

/** The service's rule (nothing taken for 60 s), shortened so that a stall shows within seconds. */
const STALL: AnswerStall = { stallMs: 1000, checkMs: 100 };
/** Far more than loopback's socket buffers take in (about 4 MB): most of it stays in the service. */
const BIG = 16 * 1024 * 1024;
/** How long `/late` computes before answering: past the grace. */
const LATE_MS = 2500;
/** Generous on a loaded machine, yet far below the for ever it was. */
const CUT_WITHIN_MS = 6000;
/** The honest reader's pace: 16 times the minimum, about 4 s for the whole answer. */
const READER_BYTES_PER_SECOND = 4 * 1024 * 1024;

/** Bytes 0 to 250 over and over: a byte lost, doubled or moved shows. */
const PATTERN = Buffer.from(Array.from({ length: 251 }, (_, index) => index));

let service: ServiceUnderTest;
let port: number;
test.before(async () => {
  const file = path.join(scratchFolder('answer-pace'), 'big.bin');
  writeFileSync(file, Buffer.alloc(BIG, PATTERN));
  const root = writeTree({
    'projects/slow/api/routes.js': `const PATTERN = Buffer.from(Array.from({ length: 251 }, (_, index) => index));
const FILE = ${JSON.stringify(file)};
/** The request ids whose written-in-pieces answer saw its connection close, and stopped. */
const stopped = [];
const big = () => Buffer.alloc(${BIG}, PATTERN);
async function writeInPieces(req, res) {
  res.type('application/octet-stream');
  const piece = Buffer.alloc(64 * 1024, PATTERN);
  let closed = false;
  res.once('close', () => { closed = true; });
  const drained = () => new Promise((resolve) => {
    const done = () => { res.off('drain', done); res.off('close', done); resolve(); };
    res.once('drain', done);
    res.once('close', done);
  });
  for (let written = 0; written < ${BIG} * 4 && !closed; written += piece.length) {
    if (!res.write(piece)) await drained();
  }
  if (closed) stopped.push(req.get('X-Request-Id'));
  else res.end();
}
export default [
  { method: 'GET', path: '/send', skipAuth: true, function: (req, res) => res.type('application/octet-stream').send(big()) },
  { method: 'GET', path: '/download', skipAuth: true, function: (req, res) => res.download(FILE) },
  { method: 'GET', path: '/write', skipAuth: true, function: writeInPieces },
  { method: 'GET', path: '/stopped', skipAuth: true, function: (req, res) => res.json(stopped) },
  { method: 'GET', path: '/late', skipAuth: true, function: async (req, res) => { await new Promise((resolve) => setTimeout(resolve, ${LATE_MS})); res.json({ late: true }); } },
  { method: 'GET', path: '/ping', skipAuth: true, function: (req, res) => res.json({ pong: true }) },
];
`,
  });
  service = await startWithProjects(undefined, path.join(root, 'projects'), { answerStall: STALL });
  port = Number(new URL(service.url).port);
});
test.after.always(async () => {
  await service?.close();
  await dropTestDatabase();
});

function get(pathname: string, requestId: string, connection = 'keep-alive'): string {
  return `GET /api/slow${pathname} HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${requestId}\r\nConnection: ${connection}\r\n\r\n`;
}

/** A client that sends `request` and reads nothing: its answer fills the buffers and waits. */
async function nonReader(request: string): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.pause();
  await once(socket, 'connect');
  socket.write(request);
  return socket;
}

/** Everything `socket` still brings, read at full speed until it closes (or `timeoutMs` passes). */
function readToClose(socket: Socket, timeoutMs: number): Promise<{ bytes: number; closed: boolean }> {
  return new Promise((resolve) => {
    let bytes = 0;
    const timer = setTimeout(() => resolve({ bytes, closed: false }), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ bytes, closed: true });
    });
    socket.resume();
  });
}

/** Reads `request`'s answer at `bytesPerSecond`, a tenth of a second's worth at a time, until the server closes. */
function slowReader(request: string, bytesPerSecond: number, timeoutMs: number): Promise<{ received: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    let allowed = 0;
    const pacer = setInterval(() => {
      allowed += bytesPerSecond / 10;
      if (allowed > 0) socket.resume();
    }, 100);
    const finish = (closed: boolean) => {
      clearInterval(pacer);
      clearTimeout(timer);
      socket.destroy();
      resolve({ received: Buffer.concat(chunks), closed });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      allowed -= chunk.length;
      if (allowed <= 0) socket.pause();
    });
    socket.once('close', () => finish(true));
    socket.write(request);
  });
}

async function warnedAbout(requestId: string, withinMs: number): Promise<Record<string, unknown> | undefined> {
  const until = performance.now() + withinMs;
  while (performance.now() < until) {
    const line = service.logs().find((entry) => entry.requestId === requestId && entry.level === 40);
    if (line !== undefined) return line;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return undefined;
}

for (const how of ['send', 'download', 'write']) {
  test(`a client that never reads its answer (${how}) has its connection closed within the bound, logged, while others are served`, async (t) => {
    const requestId = `answer-pace-${how}`;
    const started = performance.now();
    const socket = await nonReader(get(`/${how}`, requestId));
    t.teardown(() => socket.destroy());
    await new Promise((resolve) => setTimeout(resolve, STALL.stallMs / 2));
    t.is((await service.fetch('/api/slow/ping')).status, 200, 'another client is served meanwhile');
    const line = await warnedAbout(requestId, boundUnderLoad(CUT_WITHIN_MS));
    const tookMs = performance.now() - started;
    t.truthy(line, `no warning ${Math.round(tookMs)} ms after the request`);
    t.like(line, { method: 'GET', path: `/api/slow/${how}` });
    t.regex(String(line?.msg), /answer not read/);
    t.true(Number(line?.unsentBytes) > 0, `unsent: ${line?.unsentBytes}`);
    t.true(tookMs >= STALL.stallMs * 0.9, `cut after ${Math.round(tookMs)} ms, before the grace`);
    // What the kernel had taken still arrives; then the connection ends, short of the whole answer.
    const rest = await readToClose(socket, boundUnderLoad(CUT_WITHIN_MS));
    t.true(rest.closed, 'the service closed the connection');
    t.true(rest.bytes < BIG, `${rest.bytes} bytes arrived`);
    if (how === 'write') {
      const stopped = (await (await service.fetch('/api/slow/stopped')).json()) as string[];
      t.true(stopped.includes(requestId), 'the route writing in pieces saw the connection close');
    }
  });
}

test('a client that reads half its answer at a good pace and then stops is cut within the bound of stopping: what it read buys no more time', async (t) => {
  const requestId = 'answer-pace-half';
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  t.teardown(() => socket.destroy());
  await once(socket, 'connect');
  // Read at the honest reader's pace over several checks, so that the time earned is counted.
  let received = 0;
  let allowed = 0;
  const pacer = setInterval(() => {
    allowed += READER_BYTES_PER_SECOND / 10;
    if (allowed > 0 && received < BIG / 2) socket.resume();
  }, 100);
  t.teardown(() => clearInterval(pacer));
  const stoppedAt = new Promise<number>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      allowed -= chunk.length;
      if (allowed > 0 && received < BIG / 2) return;
      socket.pause();
      if (received >= BIG / 2) resolve(performance.now());
    });
  });
  socket.write(get('/send', requestId));
  const stopped = await stoppedAt;
  clearInterval(pacer);
  const line = await warnedAbout(requestId, boundUnderLoad(CUT_WITHIN_MS));
  t.truthy(line, `no warning ${Math.round(performance.now() - stopped)} ms after the client stopped reading`);
});

/** The body of an answer with a Content-Length, from the raw bytes of its connection. */
function bodyOf(received: Buffer): { status: string; body: Buffer; length: number } {
  const headEnd = received.indexOf('\r\n\r\n');
  const head = received.subarray(0, headEnd).toString('latin1');
  const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);
  return { status: head.slice(0, head.indexOf('\r\n')), body: received.subarray(headEnd + 4), length };
}

for (const how of ['send', 'download']) {
  test(`a client reading its answer (${how}) slowly but above the minimum rate gets all of it, byte for byte`, async (t) => {
    const outcome = await slowReader(get(`/${how}`, `answer-pace-slow-${how}`, 'close'), READER_BYTES_PER_SECOND, boundUnderLoad(CUT_WITHIN_MS) * 4);
    t.true(outcome.closed, 'the answer ended');
    const { status, body, length } = bodyOf(outcome.received);
    t.is(status, 'HTTP/1.1 200 OK');
    t.is(length, BIG);
    t.is(body.length, BIG, `${body.length} of ${BIG} bytes arrived`);
    t.true(body.equals(Buffer.alloc(BIG, PATTERN)), 'byte for byte');
    t.is(service.logs().filter((entry) => entry.requestId === `answer-pace-slow-${how}` && entry.level === 40).length, 0);
  });
}

test('a handler computing longer than the grace, and a keep-alive connection idle that long, are not cut', async (t) => {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await once(socket, 'connect');
  t.teardown(() => socket.destroy());
  socket.write(get('/late', 'answer-pace-late'));
  await new Promise((resolve) => setTimeout(resolve, LATE_MS + STALL.stallMs * 2));
  t.regex(Buffer.concat(chunks).toString('latin1'), /^HTTP\/1\.1 200 OK\r\n[\s\S]*\{"late":true\}$/);
  socket.write(get('/ping', 'answer-pace-after-idle', 'close'));
  await once(socket, 'close');
  t.regex(Buffer.concat(chunks).toString('latin1'), /\{"pong":true\}$/);
});

test('a client that pipelines a second request behind an answer it never reads: the warning names the answer left unread', async (t) => {
  const socket = await nonReader(get('/send', 'answer-pace-pipelined-send') + get('/ping', 'answer-pace-pipelined-ping'));
  t.teardown(() => socket.destroy());
  const line = await warnedAbout('answer-pace-pipelined-send', boundUnderLoad(CUT_WITHIN_MS));
  const named = service.logs().filter((entry) => String(entry.requestId).startsWith('answer-pace-pipelined') && entry.level === 40);
  t.like(line, { method: 'GET', path: '/api/slow/send' }, `warned: ${JSON.stringify(named)}`);
});
