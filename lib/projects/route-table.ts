import { authModeOf, type ProjectDefinition } from './definition.ts';
import type { MountedRoute } from './types.ts';

/** The segment of `/api/project`, where the default project answers too. */
export const DEFAULT_MOUNT = 'project';

/** What `make routes` and `/openapi.json` describe: every route with the URLs it answers at. */
export function routeTable(projects: readonly ProjectDefinition[], defaultProject: string | undefined): readonly MountedRoute[] {
  return Object.freeze(
    projects.flatMap((project) =>
      project.routes.map((route) =>
        Object.freeze({
          project: project.name,
          method: route.method,
          path: route.path,
          urls: Object.freeze(mountsOf(project.name, defaultProject).map((mount) => `/api/${mount}${route.path}`)),
          auth: authModeOf(route),
          file: project.file,
          summary: route.summary,
          description: route.description,
          tags: route.tags,
          schemas: route.schema?.documents,
        }),
      ),
    ),
  );
}

function mountsOf(name: string, defaultProject: string | undefined): string[] {
  return name === defaultProject ? [name, DEFAULT_MOUNT] : [name];
}
