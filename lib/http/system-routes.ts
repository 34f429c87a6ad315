import Router from '@koa/router';
import { NO_TENANT } from '../db/tenant-database.ts';
import { addDocsPage, buildOpenApiDocument } from '../openapi/index.ts';
import type { MountedRoute } from '../projects/types.ts';
import type { Runtime } from '../core/runtime.ts';
import { routerArea } from '../core/routing.ts';
import type { Area } from './entry.ts';

const HEALTH_TIMEOUT_MS = 1500;

/** `GET /healthz`, `GET /openapi.json` and `GET /docs`: the endpoints that take no tenant (SPEC §12). */
export function systemArea(runtime: Runtime, projectRoutes: readonly MountedRoute[]): Area {
  let openApi: string | undefined;
  const router = new Router();
  router.get('/healthz', async (ctx) => {
    const up = await databaseAnswers(runtime);
    ctx.status = up ? 200 : 503;
    ctx.body = up ? { status: 'ok' } : { error: 'database unavailable' };
  });
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    openApi ??= JSON.stringify(buildOpenApiDocument(projectRoutes, { refererValidation: runtime.config.referer.enabled }));
    ctx.body = openApi;
  });
  addDocsPage(router);
  return routerArea(router);
}

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
