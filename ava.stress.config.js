// `make test-stress`: the heavy suites (property-based isolation, faults, fuzzing, load, two
// instances), kept out of `make test`. Each file bounds its own running time.
export default {
  extensions: ['ts'],
  files: ['test/stress/**/*.test.ts'],
  timeout: '5m',
  workerThreads: false,
  concurrency: 1,
};
