import fc from 'fast-check';
import type { MigratedDatabase, TenantDatabaseRoute } from './database.ts';
import { auditCase, auditWorlds, checkAuditIsolation } from './audit-isolation.ts';
import { checkIsolation, isolationCase, isolationWorlds } from './isolation.ts';
import { checkSpaceIsolation, spaceCase, spaceWorlds } from './space-isolation.ts';

/**
 * The isolation properties run long (test/stress/): the cases are split over parallel lanes,
 * each with databases of its own.
 */
export const LANES = 4;

export interface LaneOptions {
  /** How the service's view reaches the databases (a pooler); direct when left out. */
  route?: TenantDatabaseRoute;
  /** Started on the world where the tenants live side by side, and stopped once the lane is done. */
  alongside?: (shared: MigratedDatabase) => () => Promise<void>;
}

/** Runs `lane` on `LANES` lanes at once, `total` runs between them; fails with the first lane that fails, once all have ended. */
export async function inLanes(total: number, lane: (runs: number) => Promise<void>): Promise<void> {
  const outcomes = await Promise.allSettled(Array.from({ length: LANES }, (_, index) => lane(Math.floor(total / LANES) + (index < total % LANES ? 1 : 0))));
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

/** The document isolation property (test/helpers/isolation.ts), `runs` cases. */
export function documentLane(runs: number, options: LaneOptions = {}): Promise<void> {
  return propertyLane(runs, options, isolationWorlds, isolationCase, checkIsolation);
}

/** The spaces isolation property (test/helpers/space-isolation.ts), `runs` cases. */
export function spaceLane(runs: number, options: LaneOptions = {}): Promise<void> {
  return propertyLane(runs, options, spaceWorlds, spaceCase, checkSpaceIsolation);
}

/** The audit isolation property (test/helpers/audit-isolation.ts), `runs` cases. */
export function auditLane(runs: number, options: LaneOptions = {}): Promise<void> {
  return propertyLane(runs, options, auditWorlds, auditCase, checkAuditIsolation);
}

interface Worlds {
  readonly shared: MigratedDatabase;
  close(): Promise<void>;
}

async function propertyLane<World extends Worlds, Case>(
  runs: number,
  options: LaneOptions,
  open: (route?: TenantDatabaseRoute) => Promise<World>,
  cases: fc.Arbitrary<Case>,
  check: (worlds: World, example: Case) => Promise<void>,
): Promise<void> {
  const worlds = await open(options.route);
  const stop = options.alongside?.(worlds.shared);
  try {
    // The report of a counter-example says what differed, not only which case.
    await fc.assert(fc.asyncProperty(cases, (example) => check(worlds, example)), { numRuns: runs, includeErrorInReport: true });
  } finally {
    await stop?.();
    await worlds.close();
  }
}
