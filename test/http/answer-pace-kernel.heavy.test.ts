import test from 'ava';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { startWithProjects, writeTree } from '../helpers/projects.ts';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';

// The kernel takes an answer's bytes in bursts: it wakes a writer only once a third of its send
// buffer (up to 4 MB) is free, after the client's receive buffer has been read into. A rule on a
// rate, its time earned capped at a 10 s grace, cut a client reading a 32 MB answer steadily at
// 64 KiB/s (found in review: 23 241 415 bytes unsent). The rule is now on silence between bursts
// (nothing taken for limits.answerStallMs, 120 s, as nginx's send_timeout): curl at 64 KiB/s
// has its first 10.3 MB taken at once (both ends' buffers), then nothing for about 90 s.

/** Far more than loopback's buffers take in. */
const BIG = 32 * 1024 * 1024;
/** About 90 s between what the kernel takes, on loopback. */
const RATE = '64K';

const run = promisify(execFile);

let service: ServiceUnderTest;
test.before(async () => {
  const root = writeTree({
    'projects/slow/api/routes.js': `export default [
  { method: 'GET', path: '/send', skipAuth: true, function: (req, res) => res.type('application/octet-stream').send(Buffer.alloc(${BIG}, 'x')) },
];
`,
  });
  service = await startWithProjects(undefined, path.join(root, 'projects'));
});
test.after.always(async () => {
  await service?.close();
  await dropTestDatabase();
});

test('a client reading a 32 MB answer steadily at 64 KiB/s is not cut within 110 s', async (t) => {
  // curl reads at 64 KiB/s; stopped after 110 s (its own --max-time): by then, cut or still reading.
  const outcome = await run('curl', ['-sS', '--limit-rate', RATE, '--max-time', '110', '-o', '/dev/null', '-w', '%{size_download}', `${service.url}/api/slow/send`]).then(
    ({ stdout }) => stdout,
    (error: { stdout?: string; stderr?: string }) => `${error.stdout} ${error.stderr}`,
  );
  const cut = service.logs().filter((line) => /answer not read/.test(String(line.msg)));
  t.log(outcome.trim(), JSON.stringify(cut));
  t.deepEqual(cut, [], 'no answer was cut');
  t.regex(outcome, /Operation timed out/, 'curl was still reading when it gave up');
});
