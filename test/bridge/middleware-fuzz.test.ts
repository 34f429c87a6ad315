import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import test from 'ava';
import { HOOKS, hooksServiceForFile } from '../helpers/middleware-apps.ts';
import { fuzzMiddleware, tallySummary } from '../helpers/middleware-fuzz.ts';

/**
 * The fuzz of test/helpers/middleware-fuzz.ts, a small run: Express body middleware and raw
 * stream readers under generated requests (types, bodies, encodings, chunking, lengths that
 * lie, clients that abort) never end the process and never leave a request unanswered. The
 * long run is test/stress/middleware-fuzz.test.ts; BRIDGE_FUZZ_SEED=<n> replays a run.
 */
const HANDLER_MS = 5000;
const RUNS = 60;
const TIME_LIMIT_MS = 20_000;
const service = hooksServiceForFile(HANDLER_MS);

test(`${RUNS} batches of generated requests to Express body middleware: the service lives, every whole request is answered`, async (t) => {
  const tally = await fuzzMiddleware(service(), { runs: RUNS, timeLimitMs: TIME_LIMIT_MS, handlerMs: HANDLER_MS });
  t.log(tallySummary(tally));
  t.true(service().running());
});

/** The status of a POST of `body` as given, with the headers given (no length fixed by fetch). */
function post(port: number, path: string, headers: Record<string, string | number>, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port, path, method: 'POST', headers }, (answer) => {
      answer.resume();
      resolve(answer.statusCode ?? 0);
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

test('a compressed body over the limit that ends early is 413, and the decoder left behind ends nothing (found by the long run)', async (t) => {
  // Just over 1 MiB of JSON in a few KB of gzip, its last bytes cut: the parser stops at the limit (1 MiB),
  // and the decoder still piped from the request then meets the early end of the gzip stream.
  const whole = gzipSync(Buffer.from(`{"padding":"${' '.repeat(1024 * 1024)}"}`));
  const cut = whole.subarray(0, whole.length - 8);
  for (const path of ['/text', '/form']) {
    const status = await post(service().port, `${HOOKS}${path}`, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': cut.length }, cut);
    t.is(status, 413, path);
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.deepEqual(service().uncaughtExceptions(), []);
  t.true(service().running());
  t.is(await service().health(), 200);
});
