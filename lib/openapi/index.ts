import type { MountedRoute } from '../projects/types.ts';

/** The OpenAPI 3.1 document of the system endpoints and the mounted project routes (SPEC §12). */
export function buildOpenApiDocument(_projectRoutes: readonly MountedRoute[]): Record<string, unknown> {
  return { openapi: '3.1.0', info: { title: 'spaceport', version: '0.1.0' }, paths: {} };
}
