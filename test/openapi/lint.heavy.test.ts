import path from 'node:path';
import test from 'ava';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { cli } from '../helpers/cli.ts';
import { serverUrl } from '../helpers/database.ts';
import { dropTestDatabase } from '../helpers/service.ts';
import { fixtureProjects, migrateFileDatabase, startWithProjects, writeTree } from '../helpers/projects.ts';

/** The repository's own projects folder: the sample project. */
const SAMPLE_PROJECTS = path.resolve(import.meta.dirname, '..', '..', 'projects');

// One service at a time: each starts the whole service, and the machine may be busy.
test.before(migrateFileDatabase);
test.after.always(dropTestDatabase);

/** Every problem Redocly's `recommended` rules find in the document, errors and warnings, one line each. */
async function lintProblems(document: string): Promise<string[]> {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: document, absoluteRef: '/openapi.json', config });
  return problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer ?? '?'}`);
}

for (const [name, projectsDir, spaces] of [
  ['the sample project and the system routes', SAMPLE_PROJECTS, false],
  ['the sample project and the system routes, spaces enabled', SAMPLE_PROJECTS, true],
  ['the schemas fixture (declared schemas, file fields, an API key)', fixtureProjects('schemas'), true],
] as const) {
  test.serial(`the served /openapi.json of ${name} is clean under Redocly's recommended rules`, async (t) => {
    const service = await startWithProjects(t, projectsDir, { expert: { spaces: { enabled: spaces } } });
    const response = await service.fetch('/openapi.json');
    t.is(response.status, 200);
    t.deepEqual(await lintProblems(await response.text()), []);
  });
}

test.serial("the served /openapi.json of a project fresh from make project is clean under Redocly's recommended rules", async (t) => {
  const projectsDir = writeTree({});
  const scaffolded = await cli(['project', 'desk'], serverUrl(), { PROJECTS_DIR: projectsDir });
  t.is(scaffolded.code, 0, scaffolded.stderr);
  const service = await startWithProjects(t, projectsDir);
  t.deepEqual(await lintProblems(await (await service.fetch('/openapi.json')).text()), []);
});
