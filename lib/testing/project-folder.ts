import { existsSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the service under test finds its projects. */
export interface ProjectsFolder {
  readonly projectsDir: string;
  /** The project's name when one project was asked for. */
  readonly project: string | undefined;
  /** A folder made for the test, removed on close. */
  readonly scratch: string | undefined;
}

/** The service gets a folder holding a link to `project` alone, so it is the only, and so the default, project. */
export function projectsFolder(project: string | URL | undefined, projectsDir: string | URL | undefined): ProjectsFolder {
  if (project === undefined) {
    if (projectsDir === undefined) throw new TypeError('spaceport/testing: start() needs `project` (a name or a folder) or `projectsDir`');
    return { projectsDir: folderPath(projectsDir), project: undefined, scratch: undefined };
  }
  const byName = typeof project === 'string' && !path.isAbsolute(project);
  const folder = byName ? path.resolve(process.env.PROJECTS_DIR || './projects', project) : folderPath(project);
  if (!existsSync(path.join(folder, 'api'))) throw new Error(`spaceport/testing: ${folder} is not a project folder (it has no api/ folder)`);
  const scratch = mkdtempSync(path.join(tmpdir(), 'spaceport-testing-'));
  const name = path.basename(folder);
  symlinkSync(folder, path.join(scratch, name), 'dir');
  return { projectsDir: scratch, project: name, scratch };
}

function folderPath(folder: string | URL): string {
  return path.resolve(folder instanceof URL ? fileURLToPath(folder) : folder);
}
