import test from 'ava';
import { dropApplicationTenantConditionForTest } from '../helpers/row-level-security-alone.ts';
import { OPERATIONS_PER_CASE } from '../helpers/isolation.ts';
import { auditLane, documentLane, inLanes, spaceLane } from '../helpers/isolation-lanes.ts';

/**
 * The isolation properties of `make test` (test/documents/isolation-property.test.ts,
 * test/db/row-level-security.test.ts), run long: 10 000 generated filters through every
 * operation with both walls up, and thousands more against row-level security alone. The
 * cases are split over parallel lanes, each with databases of its own.
 */
const DOCUMENT_CASES = 10_000;
const RLS_ALONE_CASES = 2_000;
const SPACE_CASES = 1_000;
/**
 * Each test's own limit, above ava's five minutes without a result: the cases are a fixed
 * amount of work, which a loaded machine does slower (the first test took 10 min 25 s beside
 * other suites, at load 17 on 2 cores). A limit to catch a hang, not to time the machine.
 */
const LIMIT_MS = 30 * 60_000;

test.serial(`documents, both walls: ${DOCUMENT_CASES} generated filters × ${OPERATIONS_PER_CASE} operations, no leak`, async (t) => {
  t.timeout(LIMIT_MS);
  const started = performance.now();
  await inLanes(DOCUMENT_CASES, documentLane);
  t.log(`${DOCUMENT_CASES * OPERATIONS_PER_CASE} operations in ${Math.round(performance.now() - started)} ms`);
  t.pass();
});

test.serial(`spaces, both walls: ${SPACE_CASES} generated command sequences, concurrent across tenants, no leak`, async (t) => {
  t.timeout(LIMIT_MS);
  await inLanes(SPACE_CASES, spaceLane);
  t.pass();
});

test.serial(`audit, both walls: ${SPACE_CASES} generated sequences of account and space changes and filtered reads, no leak`, async (t) => {
  t.timeout(LIMIT_MS);
  await inLanes(SPACE_CASES, auditLane);
  t.pass();
});

test.serial(`row-level security alone: ${RLS_ALONE_CASES} filters, ${SPACE_CASES} space sequences and ${SPACE_CASES} audit sequences, no leak`, async (t) => {
  t.timeout(LIMIT_MS);
  const restore = dropApplicationTenantConditionForTest();
  try {
    await inLanes(RLS_ALONE_CASES, documentLane);
    await inLanes(SPACE_CASES, spaceLane);
    await inLanes(SPACE_CASES, auditLane);
  } finally {
    restore();
  }
  t.pass();
});
