import { z } from 'zod';
import type { Runtime } from '../core/runtime.ts';
import { NO_TENANT } from '../db/tenant-database.ts';
import { buildOpenApiDocument, docsAsset, docsPage } from '../openapi/index.ts';
import { serviceSchema, serviceTraits, type ServiceAreaDeclaration, type ServiceHandler } from '../routes/service-area.ts';

const HEALTH_TIMEOUT_MS = 1500;
const tags = ['system'];

const health: ServiceHandler = ({ runtime }) => async (ctx) => {
  const up = await databaseAnswers(runtime);
  ctx.status = up ? 200 : 503;
  ctx.body = up ? { status: 'ok' } : { error: 'database unavailable' };
};

const openApiDocument: ServiceHandler = ({ routes }) => {
  let openApi: string | undefined;
  return (ctx) => {
    ctx.type = 'application/json';
    openApi ??= JSON.stringify(buildOpenApiDocument(routes()));
    ctx.body = openApi;
  };
};

/** `GET /healthz`, `GET /openapi.json` and `GET /docs`: the endpoints that take no tenant (SPEC §12). */
export const systemArea: ServiceAreaDeclaration = {
  segments: ['healthz', 'openapi.json', 'docs'],
  traits: serviceTraits({ tenant: false }),
  routes: [
    {
      method: 'GET',
      path: '/healthz',
      auth: 'public',
      handler: health,
      schema: serviceSchema({ responses: { 200: z.object({ status: z.literal('ok') }).meta({ description: 'The database answers.' }) } }),
      operationId: 'health',
      summary: 'Database health',
      tags,
      errors: [503],
    },
    {
      method: 'GET',
      path: '/openapi.json',
      auth: 'public',
      handler: openApiDocument,
      schema: serviceSchema({ responses: { 200: z.looseObject({}).meta({ description: 'The OpenAPI 3.1 document.' }) } }),
      operationId: 'openApiDocument',
      summary: 'This document',
      tags,
    },
    {
      method: 'GET',
      path: '/docs',
      auth: 'public',
      handler: () => docsPage,
      schema: undefined,
      operationId: 'docsPage',
      summary: 'An API reference page (Swagger UI) for this document',
      description: 'The HTML page; its scripts and styles come from `/docs/`.',
      tags,
    },
    {
      method: 'GET',
      path: '/docs/:asset',
      auth: 'public',
      handler: () => docsAsset,
      schema: undefined,
      operationId: 'docsAsset',
      summary: 'A file the reference page loads (Swagger UI)',
      tags,
      errors: [404],
    },
  ],
};

async function databaseAnswers(runtime: Runtime): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(resolve, HEALTH_TIMEOUT_MS, false);
  });
  const query = runtime.tenantDatabase.query(NO_TENANT, { sql: 'select 1', bindings: [] }).then(() => true, () => false);
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
