import { testPathProperty } from '../helpers/prototype-paths.ts';

/**
 * The property of test/documents/prototype-paths.test.ts, run long: generated paths and keys
 * through every store operation, then the prototypes, the results and a login in another tenant
 * checked after each case. PATH_RUNS=<n> runs another number of cases, PATH_SEED=<n> replays one.
 */
testPathProperty(Number(process.env.PATH_RUNS ?? 2000), process.env.PATH_SEED === undefined ? undefined : Number(process.env.PATH_SEED));
