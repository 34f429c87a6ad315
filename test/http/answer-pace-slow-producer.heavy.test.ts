import test from 'ava';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { startWithProjects, writeTree } from '../helpers/projects.ts';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';

// The answer pace measures the client: a route that writes its answer slowly (a piece every 2 s,
// for longer than the 10 s grace) to a client that reads everything must not be cut, whether its
// pieces are small or larger than the kernel takes at once. With the service's own pace.

const PIECES = 12;
const EVERY_MS = 2000;

const run = promisify(execFile);

let service: ServiceUnderTest;
test.before(async () => {
  const root = writeTree({
    'projects/slow/api/routes.js': `
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const producer = (size) => async (req, res) => {
  res.type('application/octet-stream');
  for (let piece = 0; piece < ${PIECES}; piece++) {
    res.write(Buffer.alloc(size, 'p'));
    await sleep(${EVERY_MS});
  }
  res.end();
};
export default [
  { method: 'GET', path: '/small', skipAuth: true, function: producer(1024) },
  { method: 'GET', path: '/large', skipAuth: true, function: producer(8 * 1024 * 1024) },
];
`,
  });
  service = await startWithProjects(undefined, path.join(root, 'projects'), { expert: { limits: { handlerMs: 60_000 } } });
});
test.after.always(async () => {
  await service?.close();
  await dropTestDatabase();
});

const download = (pathname: string) =>
  run('curl', ['-sS', '-o', '/dev/null', '-w', '%{size_download}', `${service.url}${pathname}`]).then(
    ({ stdout }) => stdout,
    (error: { stdout?: string; stderr?: string }) => `${error.stdout} ${error.stderr}`,
  );

test('a route writing a piece every 2 s for 24 s, to a client reading everything, is not cut (pieces of 1 KB and of 8 MB)', async (t) => {
  const [small, large] = await Promise.all([download('/api/slow/small'), download('/api/slow/large')]);
  t.is(small, String(PIECES * 1024));
  t.is(large, String(PIECES * 8 * 1024 * 1024));
  t.deepEqual(service.logs().filter((line) => /answer not read/.test(String(line.msg))), []);
});
