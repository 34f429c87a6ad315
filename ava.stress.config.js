// `make test-stress`: the heavy suites (property-based isolation, faults, fuzzing, load, two
// instances, a fleet through PgBouncer), kept out of `make test`, and the `*.heavy.test.ts`
// files beside the tests of their folder, each of which drives real `make` targets or an
// embedded PostgreSQL for 10 to 25 s.
// Each file bounds its own running time.
export default {
  extensions: ['ts'],
  files: ['test/stress/**/*.test.ts', 'test/**/*.heavy.test.ts'],
  timeout: '5m',
  workerThreads: false,
  concurrency: 1,
};
