import type { Runtime } from '../core/runtime.ts';
import { readCatalog } from './catalog.ts';
import { mountProjects } from './mount.ts';
import type { LoadedProjects } from './types.ts';

export type { AuthMode, LoadedProjects, MountedRoute } from './types.ts';
export { readCatalog, type ProjectCatalog } from './catalog.ts';
export { routeTable } from './route-table.ts';
export { ProjectLoadError, formatProblem, displayPath, type RouteProblem } from './report.ts';

/**
 * Discovers, validates and mounts every project under `PROJECTS_DIR` (SPEC §8). Rejects with
 * the whole validation report when `projects.onError` is "fail" and something is wrong.
 */
export async function loadProjects(runtime: Runtime): Promise<LoadedProjects> {
  const settings = { sources: runtime.secrets.projectSettings, bound: runtime.projectSettings };
  const catalog = await readCatalog(runtime.config, settings, runtime.logger);
  return mountProjects(runtime, catalog.projects, catalog.defaultProject);
}
