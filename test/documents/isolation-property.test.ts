import test from 'ava';
import fc from 'fast-check';
import { checkIsolation, isolationCase, isolationWorlds, OPERATIONS_PER_CASE, type IsolationWorlds } from '../helpers/isolation.ts';

/** A quick search on every `make test`; `make test-stress` runs the same property 10 000 times (test/stress/isolation.test.ts). */
const RUNS = 60;

let worlds: IsolationWorlds;
test.before(async () => {
  worlds = await isolationWorlds();
});
test.after.always(async () => {
  await worlds?.close();
});

test.serial(`no filter of the grammar lets a tenant see or change another's rows (${RUNS} cases × ${OPERATIONS_PER_CASE} operations)`, async (t) => {
  await fc.assert(fc.asyncProperty(isolationCase, (example) => checkIsolation(worlds, example)), { numRuns: RUNS });
  t.pass();
});
