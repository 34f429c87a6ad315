import test from 'ava';
import fc from 'fast-check';
import { auditCase, auditWorlds, checkAuditIsolation, type AuditWorlds } from '../helpers/audit-isolation.ts';

/**
 * A quick search on every `make test`; `make test-stress` runs it 1 000 times, both walls and row-level
 * security alone (test/stress/isolation.test.ts), and test/db/row-level-security.test.ts against row-level security alone.
 */
const RUNS = 40;

let worlds: AuditWorlds;
test.before(async () => {
  worlds = await auditWorlds();
});
test.after.always(async () => {
  await worlds?.close();
});

test.serial(`both walls: no account or space event of one tenant reaches the other's audit, whatever the filters (${RUNS} cases)`, async (t) => {
  await fc.assert(fc.asyncProperty(auditCase, (steps) => checkAuditIsolation(worlds, steps)), { numRuns: RUNS });
  t.pass();
});
