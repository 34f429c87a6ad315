import test from 'ava';
import { hooksServiceForFile } from '../helpers/middleware-apps.ts';
import { fuzzMiddleware, tallySummary } from '../helpers/middleware-fuzz.ts';

/**
 * The long run of test/bridge/middleware-fuzz.test.ts: a thousand batches of generated requests
 * to Express body middleware and raw stream readers (types, bodies, encodings, chunking, lengths
 * that lie, clients that abort), within 50 s, and the service never dies, never logs an uncaught
 * exception, answers every request framed whole and /healthz after every batch.
 * BRIDGE_FUZZ_RUNS sets the number of batches, BRIDGE_FUZZ_SEED replays a run.
 */
const HANDLER_MS = 5000;
const RUNS = Number(process.env.BRIDGE_FUZZ_RUNS ?? 1000);
const TIME_LIMIT_MS = 50_000;
/** Far below what even a loaded machine gets through in the time: only a broken run does fewer. */
const FEWEST_BATCHES = Math.min(RUNS, 100);
const service = hooksServiceForFile(HANDLER_MS);

test(`up to ${RUNS} batches of generated requests to Express body middleware: the service lives, every whole request is answered`, async (t) => {
  const started = performance.now();
  const tally = await fuzzMiddleware(service(), { runs: RUNS, timeLimitMs: TIME_LIMIT_MS, handlerMs: HANDLER_MS });
  t.log(`${Math.round((performance.now() - started) / 1000)} s: ${tallySummary(tally)}`);
  t.true(tally.batches >= FEWEST_BATCHES, `only ${tally.batches} batches in ${TIME_LIMIT_MS / 1000} s`);
  t.true(service().running());
});
