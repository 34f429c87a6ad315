import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';
import { resolveFacilitiesFromAnywhere } from '../facilities/resolution.ts';
import { keepStrippedTypeScript } from './typescript-cache.ts';

/**
 * For `node --import` in the test runner's workers: a project's tests import `spaceport/testing`
 * and ava without node_modules of their own; route files still resolve only their project's.
 */
const TESTING_URL = new URL('./index.ts', import.meta.url).href;
const SERVICE_PACKAGE = new URL('../../package.json', import.meta.url).href;
const TEST_RUNNER = 'ava';
// A test run never reads the user's config/expert.json (where a project section, as the guide
// has one, stopped the service's fixture services, issue 37): its services, and those they
// start, read this file of defaults unless a test names another.
const TESTS_EXPERT_CONFIG = fileURLToPath(new URL('../../test/fixtures/expert.json', import.meta.url));
const STRIPPED_TYPESCRIPT = fileURLToPath(new URL('../../node_modules/.cache/stripped-typescript', import.meta.url));

process.env.EXPERT_CONFIG = TESTS_EXPERT_CONFIG;

keepStrippedTypeScript(STRIPPED_TYPESCRIPT);
resolveFacilitiesFromAnywhere(process.env.PROJECTS_DIR || 'projects');
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
