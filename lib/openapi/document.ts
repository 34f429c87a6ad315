import type { ListedRoute } from '../routes/route-table.ts';
import { components, type JsonObject } from './components.ts';
import { routePaths } from './paths.ts';

const SERVICE_TAGS: readonly JsonObject[] = [
  { name: 'system', description: 'Health and this document; no tenant.' },
  { name: 'auth', description: 'System authentication.' },
  { name: 'spaces', description: 'Named groups of schemas (internal beta, behind `spaces.enabled`).' },
  { name: 'audit', description: "The tenant's record of space and account changes (admin)." },
];

/** The OpenAPI 3.1 document of every route the service answers, its own and the projects' (SPEC §12), from their declarations. */
export function buildOpenApiDocument(routes: readonly ListedRoute[]): JsonObject {
  const { paths, schemas } = routePaths(routes);
  return {
    openapi: '3.1.0',
    info: {
      title: 'spaceport',
      version: '0.1.0',
      description: 'Multi-tenant spaces and project routes. Tenant-scoped calls take the tenant from the `tenant` header.',
    },
    tags: [...SERVICE_TAGS, ...projectTags(routes)],
    paths,
    components: { ...components, schemas: { ...(components.schemas as JsonObject), ...schemas } },
  };
}

/** One tag per project, so the docs page groups its routes (a route's own `tags` replace it). */
function projectTags(routes: readonly ListedRoute[]): JsonObject[] {
  const projects = new Set(routes.flatMap((route) => (route.project === undefined ? [] : [route.project])));
  return [...projects].map((project) => ({ name: project, description: `Routes of project ${project}, under /api/${project}.` }));
}
