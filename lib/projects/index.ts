import type { Runtime } from '../runtime.ts';
import type { LoadedProjects } from './types.ts';

export type { AuthMode, LoadedProjects, MountedRoute } from './types.ts';

/** Placeholder until the project routes issue lands: no project is mounted. */
export async function loadProjects(_runtime: Runtime): Promise<LoadedProjects> {
  return { routes: [], middleware: async (_ctx, next) => next() };
}
