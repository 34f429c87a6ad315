import type { MountedRoute } from '../projects/types.ts';
import { components, type JsonObject } from './components.ts';
import { projectPaths, type ProjectPathOptions } from './project-paths.ts';
import { systemPaths } from './system-paths.ts';

/** The OpenAPI 3.1 document of the system endpoints and the mounted project routes (SPEC §12). */
export function buildOpenApiDocument(projectRoutes: readonly MountedRoute[], options: ProjectPathOptions = { refererValidation: false }): JsonObject {
  const project = projectPaths(projectRoutes, options);
  return {
    openapi: '3.1.0',
    info: {
      title: 'spaceport',
      version: '0.1.0',
      description: 'Multi-tenant spaces and project routes. Tenant-scoped calls take the tenant from the `tenant` header.',
    },
    tags: [
      { name: 'system', description: 'Health and this document; no tenant.' },
      { name: 'auth', description: 'System authentication.' },
      { name: 'spaces', description: 'Named groups of schemas (internal beta, behind `spaces.enabled`).' },
      ...projectTags(projectRoutes),
    ],
    paths: { ...systemPaths, ...project.paths },
    components: { ...components, schemas: { ...(components.schemas as JsonObject), ...project.schemas } },
  };
}

/** One tag per project, so the docs page groups its routes (a route's own `tags` replace it). */
function projectTags(routes: readonly MountedRoute[]): JsonObject[] {
  const projects = new Set(routes.map((route) => route.project));
  return [...projects].map((project) => ({ name: project, description: `Routes of project ${project}, under /api/${project}.` }));
}
