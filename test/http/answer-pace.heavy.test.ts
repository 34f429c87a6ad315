import test from 'ava';
import { once } from 'node:events';
import { connect } from 'node:net';
import path from 'node:path';
import { boundUnderLoad } from '../helpers/machine-load.ts';
import { startWithProjects, writeTree } from '../helpers/projects.ts';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';

/** The real rule, as README.md states it (`limits.answerStallMs`): a client that never reads is cut 120 to 122 s after the kernel last took some of its answer. */
const STALL_MS = 120_000;
const BOUND_MS = 126_000;
const BIG = 16 * 1024 * 1024;

let service: ServiceUnderTest;
let port: number;
test.before(async () => {
  const root = writeTree({
    'projects/slow/api/routes.js': `export default [
  { method: 'GET', path: '/send', skipAuth: true, function: (req, res) => res.type('application/octet-stream').send(Buffer.alloc(${BIG}, 'x')) },
];
`,
  });
  service = await startWithProjects(undefined, path.join(root, 'projects'));
  port = Number(new URL(service.url).port);
});
test.after.always(async () => {
  await service?.close();
  await dropTestDatabase();
});

test('with the real pace, a client that never reads its answer has its connection closed after 120 s and within 126 s, with one warn line', async (t) => {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.pause();
  await once(socket, 'connect');
  const started = performance.now();
  socket.write('GET /api/slow/send HTTP/1.1\r\nHost: x\r\nX-Request-Id: heavy-answer-pace\r\n\r\n');
  let warnedAfterMs: number | undefined;
  while (warnedAfterMs === undefined && performance.now() - started < boundUnderLoad(BOUND_MS)) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (service.logs().some((line) => line.requestId === 'heavy-answer-pace' && line.level === 40)) warnedAfterMs = performance.now() - started;
  }
  t.true((warnedAfterMs ?? 0) >= STALL_MS * 0.9, `cut after ${warnedAfterMs} ms`);
  t.true((warnedAfterMs ?? Infinity) < boundUnderLoad(BOUND_MS), `cut after ${warnedAfterMs} ms`);
  const warnings = service.logs().filter((line) => line.requestId === 'heavy-answer-pace' && line.level === 40);
  t.is(warnings.length, 1);
  t.like(warnings[0], { msg: 'answer not read by its client (nothing taken for 120 s): connection closed', method: 'GET', path: '/api/slow/send' });
  socket.resume();
  await once(socket, 'close');
});
