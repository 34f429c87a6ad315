import test from 'ava';
import { once } from 'node:events';
import { connect } from 'node:net';
import { serviceForFile, type ServiceUnderTest } from '../helpers/service.ts';

let service: ServiceUnderTest;
serviceForFile({}, (started) => {
  service = started;
});

/** Sends raw bytes and reads until the server closes the connection (or 5 s pass). */
async function rawExchange(request: string): Promise<string> {
  const socket = connect(Number(new URL(service.url).port), '127.0.0.1');
  socket.setTimeout(5000, () => socket.destroy());
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.write(request);
  await once(socket, 'close');
  return Buffer.concat(chunks).toString('utf8');
}

interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  body: string;
}

function parseAnswer(raw: string): RawAnswer {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers = new Map(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

/** 405 with the `Allow` of the target: a known path's methods, none for a host or an unknown path. */
const CASES: Array<[string, string, string]> = [
  ['a proxy target (authority form)', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', ''],
  ['a known path', 'CONNECT /healthz HTTP/1.1\r\nHost: x\r\n\r\n', 'HEAD, GET'],
  ['an unknown path', 'CONNECT /nowhere HTTP/1.1\r\nHost: x\r\n\r\n', ''],
];

for (const [title, request, allow] of CASES) {
  test(`CONNECT to ${title} is answered 405 with Allow, a JSON error, an X-Request-Id and a log line, and the connection closes`, async (t) => {
    const status = 405;
    const answer = parseAnswer(await rawExchange(request));
    t.is(answer.status, status);
    t.is(answer.headers.get('content-type'), 'application/json; charset=utf-8');
    t.deepEqual(JSON.parse(answer.body), { error: 'Method Not Allowed' });
    t.is(answer.headers.get('allow'), allow);
    t.is(answer.headers.get('connection'), 'close');
    const requestId = answer.headers.get('x-request-id') ?? '';
    t.regex(requestId, /^[0-9a-f-]{36}$/);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const lines = service.logs().filter((entry) => entry.requestId === requestId && entry.msg === 'request');
    t.is(lines.length, 1);
    t.like(lines[0], { method: 'CONNECT', status });
  });
}

test('the service keeps serving after CONNECT requests', async (t) => {
  await rawExchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
  t.is((await service.fetch('/healthz')).status, 200);
});

test('a CONNECT pipelined behind requests still being answered waits its turn, and the service keeps serving', async (t) => {
  const get = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
  const connect = 'CONNECT /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
  const statuses = (raw: string) => [...raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1]);
  t.deepEqual(statuses(await rawExchange(get + connect)), ['200', '405']);
  t.deepEqual(statuses(await rawExchange(get + get + connect)), ['200', '200', '405']);
  t.is((await service.fetch('/healthz')).status, 200);
});

test('a CONNECT pipelined behind a request with an unknown Expect waits its turn too', async (t) => {
  const expecting = 'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\n\r\n';
  const connect = 'CONNECT /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
  const statuses = (raw: string) => [...raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1]);
  t.deepEqual(statuses(await rawExchange(expecting + connect)), ['200', '405']);
  t.is((await service.fetch('/healthz')).status, 200);
});

test('an HTTP/1.1 request without Host is 400 with a JSON error and an X-Request-Id, not a bare status line', async (t) => {
  const answer = parseAnswer(await rawExchange('GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n'));
  t.is(answer.status, 400);
  t.deepEqual(JSON.parse(answer.body), { error: 'Host header is required' });
  t.regex(answer.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  t.is(parseAnswer(await rawExchange('GET /healthz HTTP/1.0\r\n\r\n')).status, 200, 'HTTP/1.0 needs no Host');
});

test('an Expect the service does not know is ignored: the request is served like any other', async (t) => {
  const answer = parseAnswer(await rawExchange('GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n'));
  t.is(answer.status, 200);
  t.deepEqual(JSON.parse(answer.body), { status: 'ok' });
  t.regex(answer.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
});
