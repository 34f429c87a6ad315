import type { Context } from 'koa';

/**
 * What answers the URLs whose first path segment is one name (`/healthz`, `/spaces/...`,
 * `/api/...`), and what runs behind the tenant step: the request's answer, once routed.
 */
export type Area = (ctx: Context) => Promise<void> | void;
