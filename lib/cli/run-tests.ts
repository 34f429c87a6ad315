import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { didYouMean } from '../values/did-you-mean.ts';

/** `make test [PROJECT=shop]`: ava over the service's and every project's tests (SPEC §8.8), or one project's. */
const REPOSITORY = path.resolve(import.meta.dirname, '../..');
const AVA = path.join(REPOSITORY, 'node_modules/ava/entrypoints/cli.js');
const SERVICE_TESTS = 'test/**/*.test.ts';
const TEST_FILE = /\.test\.(js|mjs|ts)$/;

function main(): void {
  const { values } = parseArgs({ options: { project: { type: 'string' } } });
  const projectsDir = path.resolve(process.env.PROJECTS_DIR || 'projects');
  const files = values.project ? projectTests(projectsDir, values.project) : everyTest(projectsDir);
  const ava = spawn(process.execPath, [AVA, '--tap', ...files], { cwd: REPOSITORY, stdio: 'inherit' });
  ava.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

/** ava's own `files` globs cover the repository's projects; other folders are named here. */
function everyTest(projectsDir: string): string[] {
  if (projectsDir === path.join(REPOSITORY, 'projects')) return [];
  const folders = existsSync(projectsDir) ? readdirSync(projectsDir).map((name) => path.join(projectsDir, name)) : [];
  return [SERVICE_TESTS, ...folders.flatMap(testFiles)];
}

function projectTests(projectsDir: string, project: string): string[] {
  const folder = path.join(projectsDir, project);
  if (!existsSync(path.join(folder, 'api'))) throw new Error(`no project "${project}" in ${projectsDir}${knownProjects(projectsDir, project)}`);
  const files = testFiles(folder);
  if (files.length === 0) throw new Error(`project "${project}" has no tests (${path.join(folder, 'test')}/*.test.js)`);
  return files;
}

/** ` (did you mean "shop"?); its projects: sample, shop`, or `; it has no projects`. */
function knownProjects(projectsDir: string, project: string): string {
  const names = existsSync(projectsDir) ? readdirSync(projectsDir).filter((name) => existsSync(path.join(projectsDir, name, 'api'))).sort() : [];
  return names.length === 0 ? '; it has no projects' : `${didYouMean(project, names)}; its projects: ${names.join(', ')}`;
}

function testFiles(projectFolder: string): string[] {
  const folder = path.join(projectFolder, 'test');
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((file) => TEST_FILE.test(file))
    .sort()
    .map((file) => path.join(folder, file));
}

try {
  main();
} catch (error) {
  process.stderr.write(`test: ${(error as Error).message}\n`);
  process.exit(2);
}
