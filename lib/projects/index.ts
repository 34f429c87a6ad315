import type { Runtime } from '../core/runtime.ts';
import { useDeclaredIndexes } from '../documents/declared-paths.ts';
import { withFacilityState } from '../facilities/current.ts';
import { readCatalog } from './load.ts';
import { mountProjects, type LoadedProjects } from './mount.ts';

export type { LoadedProjects } from './mount.ts';
export { readCatalog, type ProjectCatalog } from './load.ts';
export { projectRouteTable } from './mount.ts';
export { ProjectLoadError, formatProblem, displayPath, type RouteProblem } from './problems.ts';

/**
 * Discovers, validates and mounts every project under `PROJECTS_DIR` (SPEC §8), importing their
 * files as `runtime`'s: what they read and start as they load is this service's.
 */
export async function loadProjects(runtime: Runtime): Promise<LoadedProjects> {
  const settings = { sources: runtime.secrets.projectSettings, bound: runtime.projectSettings };
  const catalog = await withFacilityState(runtime, () => readCatalog(runtime.config, settings, runtime.logger));
  const mounted = mountProjects(runtime, catalog.projects, catalog.defaultProject);
  // Declared paths are written on their index keys from now on: built or not yet, the answers are the same.
  useDeclaredIndexes(runtime.declaredPaths, mounted.indexes ?? []);
  return mounted;
}
