import type { ListedRoute } from '../routes/route-table.ts';
import { components, type JsonObject } from './components.ts';
import { routePaths } from './paths.ts';
import { tagsOf } from './tags.ts';
import { usedComponents } from './used-components.ts';

/** Relative, so "Try it out" and generated clients call whichever address served the document. */
const SERVERS: readonly JsonObject[] = [{ url: '/', description: 'The service that serves this document.' }];

/** The repository grants no license; the document says so rather than name one. */
const LICENSE: JsonObject = { name: 'No license granted (all rights reserved)', identifier: 'LicenseRef-Unlicensed' };

/** The OpenAPI 3.1 document of every route the service answers, its own and the projects' (SPEC §12), from their declarations. */
export function buildOpenApiDocument(routes: readonly ListedRoute[]): JsonObject {
  const { paths, schemas, securitySchemes } = routePaths(routes);
  const document: JsonObject = {
    openapi: '3.1.0',
    info: {
      title: 'spaceport',
      version: '0.1.0',
      description: 'Multi-tenant spaces and project routes. Tenant-scoped calls take the tenant from the `tenant` header.',
      license: LICENSE,
    },
    servers: SERVERS,
    tags: tagsOf(routes),
    paths,
  };
  const all = { ...components, schemas: { ...components.schemas, ...schemas }, securitySchemes };
  return { ...document, components: usedComponents(document, all) };
}
