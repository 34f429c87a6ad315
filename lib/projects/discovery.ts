import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { BUILT_IN_SECTIONS } from '../config/schema.ts';
import type { RouteProblem } from './problems.ts';

const PROJECT_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
/** `/api/project` is the default project's mount, so no project may take that name. */
const RESERVED_NAME = 'project';
const ROUTE_FILES = ['routes.js', 'routes.mjs', 'routes.ts'];

/** A folder of PROJECTS_DIR with exactly one route file and an acceptable name. */
export interface ProjectFolder {
  readonly name: string;
  readonly file: string;
}

export interface Discovery {
  readonly folders: readonly ProjectFolder[];
  readonly problems: readonly RouteProblem[];
}

/**
 * Every folder `<projectsDir>/<name>/` holding `api/routes.{js,mjs,ts}` (SPEC §8.1), sorted by
 * name. A missing projects folder means no projects.
 */
export function discoverProjects(projectsDir: string): Discovery {
  const folders: ProjectFolder[] = [];
  const problems: RouteProblem[] = [];
  for (const name of folderNames(projectsDir)) {
    const apiDir = path.join(projectsDir, name, 'api');
    const files = ROUTE_FILES.map((file) => path.join(apiDir, file)).filter((file) => existsSync(file));
    if (files.length === 0) continue;
    const nameProblem = problemWithName(name);
    if (nameProblem !== undefined) {
      problems.push({ project: name, file: path.join(projectsDir, name), reason: nameProblem });
    } else if (files.length > 1) {
      const found = files.map((file) => path.basename(file)).join(', ');
      problems.push({ project: name, file: apiDir, reason: `more than one route file (${found}); keep one` });
    } else {
      folders.push({ name, file: files[0] });
    }
  }
  return { folders, problems };
}

function folderNames(projectsDir: string): string[] {
  if (!existsSync(projectsDir)) return [];
  return readdirSync(projectsDir)
    .filter((name) => isDirectory(path.join(projectsDir, name)))
    .sort();
}

/** Follows symbolic links, so a project linked into PROJECTS_DIR counts. */
function isDirectory(candidate: string): boolean {
  try {
    return statSync(candidate).isDirectory();
  } catch {
    return false;
  }
}

/** Why `name` cannot name a project folder, or undefined when it can. */
export function problemWithName(name: string): string | undefined {
  if (name === RESERVED_NAME) return `project folder name "${name}" is reserved for the default project's mount`;
  if (!PROJECT_NAME.test(name)) return `project folder name "${name}" must match ${PROJECT_NAME.source}`;
  // The expert configuration keeps a project's settings under its name (SPEC §8.7).
  if (BUILT_IN_SECTIONS.has(name)) return `project folder name "${name}" is a section of the expert configuration; choose another`;
  return undefined;
}
