import test from 'ava';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { fixtureProjects } from '../helpers/projects.ts';

const run = promisify(execFile);
const REPOSITORY = path.resolve(import.meta.dirname, '../..');

/** `make test PROJECT=<project>`'s runner, over a projects folder; it fails before starting ava when the project is unknown. */
async function runTests(projectsDir: string, project: string): Promise<{ code: number; stderr: string }> {
  try {
    await run(process.execPath, ['lib/cli/run-tests.ts', '--project', project], { cwd: REPOSITORY, env: { PATH: process.env.PATH, PROJECTS_DIR: projectsDir } });
    return { code: 0, stderr: '' };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

test('make test PROJECT= with a misspelt project suggests the near one and names every project', async (t) => {
  const projectsDir = fixtureProjects('mounting');
  const { code, stderr } = await runTests(projectsDir, 'aplha');
  t.is(code, 2);
  t.is(stderr, `test: no project "aplha" in ${projectsDir} (did you mean "alpha"?); its projects: alpha, beta, gamma\n`);
});

test('make test PROJECT= naming nothing near a project names every project', async (t) => {
  const projectsDir = fixtureProjects('mounting');
  const { stderr } = await runTests(projectsDir, 'nothing');
  t.is(stderr, `test: no project "nothing" in ${projectsDir}; its projects: alpha, beta, gamma\n`);
});

test('make test PROJECT= over a folder without projects says it has none', async (t) => {
  const projectsDir = fixtureProjects('does-not-exist');
  const { stderr } = await runTests(projectsDir, 'shop');
  t.is(stderr, `test: no project "shop" in ${projectsDir}; it has no projects\n`);
});
