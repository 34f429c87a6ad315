import test from 'ava';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Pace } from '../../lib/http/pace.ts';
import { startWithProjects, writeTree } from '../helpers/projects.ts';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';

// The pace measures the client, not the service: while the service's own event loop is held (one
// route's synchronous work), it moves no bytes to or from the kernel, whatever the client does. The
// check that runs first once the loop is free (timers run before I/O is polled) saw an honest reader's
// answer, or an honest sender's body, as stalled for as long as the loop was held.

/** The service's rule, shortened: a grace of 1 s, a fast minimum, checked every 100 ms. */
const PACE: Pace = { graceMs: 1000, minBytesPerSecond: 256 * 1024, checkMs: 100 };
/** Far more than loopback's buffers take in (about 15 MB here). */
const BIG = 48 * 1024 * 1024;
/** How long `/busy` holds the event loop: past the grace. */
const BUSY_MS = 2500;

const run = promisify(execFile);

let service: ServiceUnderTest;
test.before(async () => {
  const root = writeTree({
    'projects/loop/api/routes.js': `
export default [
  { method: 'GET', path: '/big', skipAuth: true, function: (req, res) => res.type('application/octet-stream').send(Buffer.alloc(${BIG}, 7)) },
  { method: 'GET', path: '/busy', skipAuth: true, function: (req, res) => { const end = Date.now() + ${BUSY_MS}; while (Date.now() < end); res.json({ busy: true }); } },
  { method: 'POST', path: '/upload', skipAuth: true, function: (req, res) => res.json({ bytes: JSON.stringify(req.body).length }) },
];
`,
  });
  service = await startWithProjects(undefined, path.join(root, 'projects'), { answerStall: { stallMs: PACE.graceMs, checkMs: PACE.checkMs }, bodyPace: PACE });
});
test.after.always(async () => {
  await service?.close();
  await dropTestDatabase();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test.serial('a client reading a large answer at a good pace is not cut for the time the service held its own event loop', async (t) => {
  // curl in a process of its own, reading at 16 MiB/s (64 times the minimum): it reads on while the service is busy.
  const reading = run('curl', ['-sS', '--limit-rate', '16M', '-o', '/dev/null', '-w', '%{size_download}', `${service.url}/api/loop/big`]).then(
    ({ stdout }) => stdout,
    (error: { stdout?: string; stderr?: string }) => `${error.stdout} ${error.stderr}`,
  );
  await sleep(1000);
  const busy = await service.fetch('/api/loop/busy');
  t.is(busy.status, 200);
  t.is(await reading, String(BIG), 'the whole answer arrived');
  t.deepEqual(
    service.logs().filter((line) => /answer not read/.test(String(line.msg))).map((line) => line.path),
    [],
  );
});

test.serial('a client sending a large body at a good pace is not cut for the time the service held its own event loop', async (t) => {
  const body = path.join(writeTree({ 'body.json': JSON.stringify({ text: 'x'.repeat(900_000) }) }), 'body.json');
  // 512 KiB/s, twice the minimum: about 1.8 s for the body, during which the service is busy 2.5 s.
  const sending = run('curl', ['-sS', '--limit-rate', '512K', '-H', 'Content-Type: application/json', '--data-binary', `@${body}`, '-w', ' %{http_code}', `${service.url}/api/loop/upload`]).then(
    ({ stdout }) => stdout,
    (error: { stdout?: string; stderr?: string }) => `${error.stdout} ${error.stderr}`,
  );
  await sleep(300);
  t.is((await service.fetch('/api/loop/busy')).status, 200);
  t.is(await sending, '{"bytes":900011} 200');
});
