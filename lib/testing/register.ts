import { registerHooks } from 'node:module';
import { resolveFacilitiesFromAnywhere } from '../facilities/resolution.ts';

/**
 * For `node --import` in the test runner's workers: a project's tests, wherever PROJECTS_DIR
 * is, import `spaceport/testing` and the test runner without a package.json or node_modules of
 * their own. Route files still resolve only what their project (or `spaceport`) provides.
 */
const TESTING_URL = new URL('./index.ts', import.meta.url).href;
const SERVICE_PACKAGE = new URL('../../package.json', import.meta.url).href;
const TEST_RUNNER = 'ava';

resolveFacilitiesFromAnywhere();
registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === 'spaceport/testing') return { url: TESTING_URL, shortCircuit: true };
    if (specifier !== TEST_RUNNER) return nextResolve(specifier, context);
    try {
      return nextResolve(specifier, context);
    } catch {
      return nextResolve(specifier, { ...context, parentURL: SERVICE_PACKAGE });
    }
  },
});
