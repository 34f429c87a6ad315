import test from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';

// Issue 37, point 1: a project section in the user's config/expert.json (as the guide says to
// write) made fixture services exit 1. The service's tests read their own file instead.
const REPOSITORY = path.resolve(import.meta.dirname, '../..');
const TESTS_OWN = path.join(REPOSITORY, 'test/fixtures/expert.json');

test("the service's tests read test/fixtures/expert.json, never the user's config/expert.json", (t) => {
  const named = process.env.EXPERT_CONFIG;
  t.truthy(named, 'EXPERT_CONFIG is set for every test worker');
  t.is(path.resolve(REPOSITORY, named ?? ''), TESTS_OWN);
  t.deepEqual(JSON.parse(readFileSync(TESTS_OWN, 'utf8')), {});
});

