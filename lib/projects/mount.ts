import type { Runtime } from '../core/runtime.ts';
import { chainSteps, routeChain } from './chain.ts';
import type { ProjectDefinition } from './definition.ts';
import { projectsArea, ProjectRouter } from './dispatch.ts';
import { DEFAULT_MOUNT, routeTable } from './route-table.ts';
import type { LoadedProjects } from './types.ts';

/** Composes every route's chain once and builds the per-project routers (SPEC §8.2, §8.3). */
export function mountProjects(runtime: Runtime, projects: readonly ProjectDefinition[], defaultProject: string | undefined): LoadedProjects {
  const steps = chainSteps(runtime);
  const routers = new Map<string, ProjectRouter>();
  for (const project of projects) {
    const router = new ProjectRouter(project.name);
    for (const route of project.routes) router.add(route.method, route.path, routeChain(route, steps));
    routers.set(project.name, router);
    if (project.name === defaultProject) routers.set(DEFAULT_MOUNT, router);
  }
  return Object.freeze({ routes: routeTable(projects, defaultProject), area: projectsArea(routers) });
}
