import createError from 'http-errors';
import type { Middleware } from 'koa';
import { readJsonBody } from '../core/request-body.ts';
import { hasBody } from '../values/has-body.ts';

/** The content types read as JSON. */
const JSON_TYPES = ['application/json', 'application/json-patch+json', 'application/vnd.api+json', 'application/csp-report', 'application/reports+json'];

/**
 * JSON bodies for system endpoints: 400 for malformed JSON and for another type (which would be
 * dropped unread, answered as missing), 413 past `limits.jsonBytes`. No body passes, unparsed.
 */
export function jsonBody(limitBytes: number): Middleware {
  return async (ctx, next) => {
    if (hasBody(ctx.req) && !ctx.is(JSON_TYPES)) throw createError(400, 'request body must be JSON (Content-Type: application/json)');
    // type-is counts a `Content-Length: 0` as a body, read as ''; no length and no transfer coding, no body.
    if (ctx.is(JSON_TYPES)) ctx.request.body = await readJsonBody(ctx.req, ctx.res, limitBytes, false);
    return next();
  };
}
