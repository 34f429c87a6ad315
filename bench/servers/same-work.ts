import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { isTenantName } from '../../lib/values/tenant-name.ts';

/**
 * The service's per-request work on the heartbeat, written once for the comparison servers that
 * do it natively (koa-native.ts, fastify.ts): a request id, a tenant checked against a cached
 * lookup of the tenants table, and RateLimit-* headers from an in-memory limiter. Each server
 * writes its own log line with its own framework's means.
 */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const WINDOW_SECONDS = 60;
/** Out of reach, as the bench raises the service's public budget: headers on every answer, never 429. */
const BUDGET = 1_000_000_000;

export const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const knownTenants = new Set<string>();
const limiter = new RateLimiterMemory({ points: BUDGET, duration: WINDOW_SECONDS });

/** The caller's `X-Request-Id` when it is well formed, a new UUID otherwise. */
export function requestIdFrom(offered: string | undefined): string {
  return offered !== undefined && REQUEST_ID.test(offered) ? offered : randomUUID();
}

/** Whether `name` is a well-formed tenant of the tenants table; found names are cached. */
export async function tenantExists(name: string): Promise<boolean> {
  if (!isTenantName(name)) return false;
  if (knownTenants.has(name)) return true;
  const found = await pool.query('select 1 from tenants where name = $1', [name]);
  if (found.rowCount === 0) return false;
  knownTenants.add(name);
  return true;
}

/** Spends one point of the caller's budget and returns the headers that report it. */
export async function rateLimitHeaders(callerKey: string): Promise<Record<string, string>> {
  const spent = await limiter.consume(callerKey);
  return {
    'RateLimit-Limit': String(BUDGET),
    'RateLimit-Remaining': String(spent.remainingPoints),
    'RateLimit-Reset': String(Math.ceil(spent.msBeforeNext / 1000)),
  };
}
