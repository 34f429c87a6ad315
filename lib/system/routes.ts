import createError from 'http-errors';
import { z } from 'zod';
import { nothingAnswers } from '../core/errors.ts';
import type { Runtime } from '../core/runtime.ts';
import { bearerTokenMatches } from '../metrics/bearer.ts';
import { buildOpenApiDocument, docsAsset, docsPage } from '../openapi/index.ts';
import { serviceSchema, serviceTraits, type ServiceAreaDeclaration, type ServiceHandler } from '../routes/service-area.ts';

const HEALTH_TIMEOUT_MS = 1500;
const tags = ['system'];

const health: ServiceHandler = ({ runtime }) => async (ctx) => {
  const up = await databaseAnswers(runtime);
  ctx.status = up ? 200 : 503;
  ctx.body = up ? { status: 'ok' } : { error: 'database unavailable' };
};

const live: ServiceHandler = () => (ctx) => {
  ctx.body = { status: 'ok' };
};

/** Ready for traffic: the database answers and the service is not draining (a load balancer's check). */
const ready: ServiceHandler = ({ runtime }) => async (ctx) => {
  const databaseUp = !runtime.readiness.draining && (await databaseAnswers(runtime));
  // Read again: the drain may have begun while the database was asked.
  const why = runtime.readiness.draining ? 'draining' : databaseUp ? undefined : 'database unavailable';
  ctx.status = why === undefined ? 200 : 503;
  // Named, not a 503: every instance shares the database, so a 503 would take the whole service down for one collection.
  const unbuiltIndexes = runtime.declaredPaths.unbuilt();
  const detail = unbuiltIndexes.length === 0 ? {} : { unbuiltIndexes };
  ctx.body = why === undefined ? { status: 'ok', ...detail } : { error: why, ...detail };
};

/** 404 while `METRICS_TOKEN` is unset, as if the route did not exist; 401 to any other credential. */
const metricsBearer: ServiceHandler = ({ runtime }) => {
  const token = runtime.secrets.metricsToken;
  return (ctx, next) => {
    if (token === undefined) throw nothingAnswers(ctx.method);
    if (!bearerTokenMatches(ctx.get('Authorization'), token)) {
      throw createError(401, 'a valid metrics token is required', { headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' } });
    }
    return next();
  };
};

const metricsText: ServiceHandler = ({ runtime }) => async (ctx) => {
  const exposition = await runtime.metrics?.exposition();
  if (exposition === undefined) throw nothingAnswers(ctx.method);
  ctx.type = exposition.contentType;
  ctx.body = exposition.text;
};

const openApiDocument: ServiceHandler = ({ routes }) => {
  let openApi: string | undefined;
  return (ctx) => {
    ctx.type = 'application/json';
    openApi ??= JSON.stringify(buildOpenApiDocument(routes()));
    ctx.body = openApi;
  };
};

const statusOk = (description: string) => z.object({ status: z.literal('ok') }).meta({ description });

const unbuiltIndex = z.object({ project: z.string(), collection: z.string(), index: z.string() });
const readyBody = z
  .object({
    status: z.literal('ok'),
    unbuiltIndexes: z.array(unbuiltIndex).optional().meta({ description: 'Declared unique indexes that could not be built: writes to their collections are refused (503).' }),
  })
  .meta({ description: 'The database answers and the service is not draining.' });

/** `GET /healthz`, `/livez`, `/readyz`, `/metrics`, `/openapi.json` and `/docs`: the endpoints that take no tenant (SPEC §12). */
export const systemArea: ServiceAreaDeclaration = {
  segments: ['healthz', 'livez', 'readyz', 'metrics', 'openapi.json', 'docs'],
  traits: serviceTraits({ tenant: false }),
  routes: [
    {
      method: 'GET',
      path: '/healthz',
      auth: 'public',
      handler: health,
      schema: serviceSchema({ responses: { 200: statusOk('The database answers.') } }),
      operationId: 'health',
      summary: 'Database health',
      tags,
      errors: [503],
    },
    {
      method: 'GET',
      path: '/livez',
      auth: 'public',
      handler: live,
      schema: serviceSchema({ responses: { 200: statusOk('The process serves.') } }),
      operationId: 'liveness',
      summary: 'Liveness: the process serves',
      tags,
    },
    {
      method: 'GET',
      path: '/readyz',
      auth: 'public',
      handler: ready,
      schema: serviceSchema({ responses: { 200: readyBody } }),
      operationId: 'readiness',
      summary: 'Readiness: what a load balancer checks',
      description:
        'Answers 503 `{error}` from SIGTERM on (the service drains) and while the database does not answer. `unbuiltIndexes` names the declared unique indexes that could not be built (their collections refuse writes); they do not make it 503.',
      tags,
      errors: [503],
    },
    {
      method: 'GET',
      path: '/metrics',
      auth: 'custom',
      authenticate: metricsBearer,
      security: [{ type: 'http', scheme: 'bearer', description: 'The `METRICS_TOKEN` the service is configured with.' }],
      handler: metricsText,
      schema: undefined,
      operationId: 'metrics',
      summary: 'Prometheus metrics',
      description: 'The Prometheus text format, to `Authorization: Bearer <METRICS_TOKEN>` only; 404 while `METRICS_TOKEN` is unset.',
      answer: { mediaType: 'text/plain; version=0.0.4', description: 'The metrics, in the Prometheus text format.' },
      tags,
      errors: [401, 404],
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
      answer: { mediaType: 'text/html', description: 'The reference page.' },
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
  // On the reserved connection: a tenant holding its whole share of the pool is not the database being down.
  const query = runtime.tenantDatabase.answers().then(() => true, () => false);
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
