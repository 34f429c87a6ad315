import { availableParallelism, loadavg } from 'node:os';

/**
 * A latency bound of the SPEC (a backend gone 2 s after its limit), as a test can hold it: as
 * is while the machine has a core for each runnable process, stretched by how many share each
 * core beyond that (10 × at most). With eight suites beside it on 2 cores (load 40), PostgreSQL
 * and the service each get a twentieth of a core, and 2 s of their work takes longer: the test
 * still fails when the thing never happens, but not for the machine's load.
 */
export function boundUnderLoad(ms: number): number {
  const perCore = (loadavg()[0] ?? 0) / availableParallelism();
  return Math.round(ms * Math.min(10, Math.max(1, perCore)));
}
