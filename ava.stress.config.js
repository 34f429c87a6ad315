// `make test-stress`: the heavy suites (property-based isolation, faults, fuzzing, load, two
// instances, a fleet through PgBouncer), kept out of `make test`, and the `*.heavy.test.ts`
// files beside the tests of their folder: each drives real `make` targets, an embedded
// PostgreSQL, or one service process after another, for 10 s and more of the machine's time
// (kept out of `make test` so that it stays near 2 minutes).
// Each file bounds its own running time.
export default {
  extensions: ['ts'],
  files: ['test/stress/**/*.test.ts', 'test/**/*.heavy.test.ts'],
  timeout: '5m',
  workerThreads: false,
  concurrency: 1,
  // As in `make test` (package.json): no test reads the user's config/expert.json, and project
  // tests resolve `spaceport/testing`.
  nodeArguments: ['--import=./lib/testing/register.ts', '--disable-warning=ExperimentalWarning'],
};
