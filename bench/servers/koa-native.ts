import { createServer } from 'node:http';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import pino from 'pino';
import { HEARTBEAT_PATH, listenFromEnvironment } from './common.ts';
import { pool, rateLimitHeaders, requestIdFrom, tenantExists } from './same-work.ts';

/**
 * The heartbeat on bare Koa with the service's per-request work written directly: request id,
 * one JSON log line (to stdout, which the harness discards), the tenant checked against a cached
 * lookup of the tenants table, and RateLimit-* headers. What is left between this and the full
 * chain is the cost of spaceport's own layers.
 */
const logger = pino({ base: undefined });

const requestIdAndLog: Middleware = async (ctx, next) => {
  const started = performance.now();
  const requestId = requestIdFrom(ctx.get('X-Request-Id') || undefined);
  ctx.set('X-Request-Id', requestId);
  ctx.res.once('close', () => {
    const ms = Math.round((performance.now() - started) * 100) / 100;
    logger.info({ method: ctx.method, url: ctx.originalUrl, status: ctx.res.statusCode, ms, tenant: ctx.state.tenant, requestId }, 'request');
  });
  await next();
};

const tenant: Middleware = async (ctx, next) => {
  const name = ctx.get('tenant') || 'default';
  if (!(await tenantExists(name))) {
    ctx.status = 400;
    ctx.body = { error: 'unknown tenant' };
    return;
  }
  ctx.state.tenant = name;
  await next();
};

const rateLimit: Middleware = async (ctx, next) => {
  ctx.set(await rateLimitHeaders(`${ctx.ip}|${String(ctx.state.tenant)}`));
  await next();
};

const router = new Router();
router.get(HEARTBEAT_PATH, rateLimit, (ctx) => {
  ctx.body = 'success';
});

const app = new Koa();
app.use(requestIdAndLog);
app.use(tenant);
app.use(router.routes());

listenFromEnvironment(createServer(app.callback()), () => pool.end());
