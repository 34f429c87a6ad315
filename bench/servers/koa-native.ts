import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import pg from 'pg';
import pino from 'pino';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { HEARTBEAT_PATH, listenFromEnvironment } from './common.ts';

/**
 * The heartbeat on bare Koa with the service's per-request work written directly: request id,
 * one JSON log line (to stdout, which the harness discards), the tenant checked against a cached
 * lookup of the tenants table, and RateLimit-* headers. What is left between this and the full
 * chain is the cost of spaceport's own layers.
 */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const TENANT = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;
const WINDOW_SECONDS = 60;
const BUDGET = 1_000_000_000;

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const logger = pino({ base: undefined });
const knownTenants = new Set<string>();
const limiter = new RateLimiterMemory({ points: BUDGET, duration: WINDOW_SECONDS });

const requestIdAndLog: Middleware = async (ctx, next) => {
  const started = performance.now();
  const offered = ctx.get('X-Request-Id');
  const requestId = REQUEST_ID.test(offered) ? offered : randomUUID();
  ctx.set('X-Request-Id', requestId);
  ctx.res.once('close', () => {
    const ms = Math.round((performance.now() - started) * 100) / 100;
    logger.info({ method: ctx.method, url: ctx.originalUrl, status: ctx.res.statusCode, ms, tenant: ctx.state.tenant, requestId }, 'request');
  });
  await next();
};

const tenant: Middleware = async (ctx, next) => {
  const name = ctx.get('tenant') || 'default';
  if (!TENANT.test(name) || !(await tenantExists(name))) {
    ctx.status = 400;
    ctx.body = { error: 'unknown tenant' };
    return;
  }
  ctx.state.tenant = name;
  await next();
};

async function tenantExists(name: string): Promise<boolean> {
  if (knownTenants.has(name)) return true;
  const found = await pool.query('select 1 from tenants where name = $1', [name]);
  if (found.rowCount === 0) return false;
  knownTenants.add(name);
  return true;
}

const rateLimitHeaders: Middleware = async (ctx, next) => {
  const spent = await limiter.consume(`${ctx.ip}|${String(ctx.state.tenant)}`);
  ctx.set('RateLimit-Limit', String(BUDGET));
  ctx.set('RateLimit-Remaining', String(spent.remainingPoints));
  ctx.set('RateLimit-Reset', String(Math.ceil(spent.msBeforeNext / 1000)));
  await next();
};

const router = new Router();
router.get(HEARTBEAT_PATH, rateLimitHeaders, (ctx) => {
  ctx.body = 'success';
});

const app = new Koa();
app.use(requestIdAndLog);
app.use(tenant);
app.use(router.routes());

listenFromEnvironment(createServer(app.callback()), () => pool.end());
