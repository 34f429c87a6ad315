import test from 'ava';
import { hooksServiceForFile } from '../helpers/middleware-apps.ts';
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
