import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectsDirFrom } from '../config/index.ts';
import type { CommandTable } from './command.ts';

const REPOSITORY = path.resolve(import.meta.dirname, '../..');
const TSC = path.join(REPOSITORY, 'node_modules/typescript/bin/tsc');
/** The compiler options of project code, kept with the repository's own projects. */
const PROJECT_OPTIONS = path.join(REPOSITORY, 'projects/tsconfig.json');

/** `make check` for projects (SPEC §13): type-checks every project of PROJECTS_DIR, JavaScript through its JSDoc. */
export const checkCommands: CommandTable = {
  'check-projects': async () => {
    const projectsDir = projectsDirFrom(process.env);
    const projects = projectFolders(projectsDir);
    if (projects.length === 0) return `no projects in ${projectsDir}: nothing to check`;
    const scratch = mkdtempSync(path.join(tmpdir(), 'spaceport-check-'));
    try {
      const config = path.join(scratch, 'tsconfig.json');
      const include = projects.flatMap((folder) => [path.join(folder, 'api/**/*'), path.join(folder, 'test/**/*')]);
      writeFileSync(config, JSON.stringify({ extends: PROJECT_OPTIONS, include }));
      const tsc = spawnSync(process.execPath, [TSC, '--noEmit', '-p', config], { stdio: 'inherit' });
      if (tsc.status !== 0) throw new Error(`type errors in the projects of ${projectsDir}, listed above`);
      return `checked ${projects.length} project(s) in ${projectsDir}`;
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  },
};

/** Folders with an `api` folder: the projects, and would-be projects with a mistake to show. */
function projectFolders(projectsDir: string): string[] {
  if (!existsSync(projectsDir)) return [];
  return readdirSync(projectsDir)
    .map((name) => path.join(projectsDir, name))
    .filter((folder) => existsSync(path.join(folder, 'api')));
}
