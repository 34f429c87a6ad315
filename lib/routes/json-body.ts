import createError from 'http-errors';
import { koaBody } from 'koa-body';
import type { Middleware } from 'koa';
import { bodyError } from '../core/errors.ts';
import { hasBody } from '../values/has-body.ts';

/** The content types read as JSON (koa-body's own list, named here so the check below agrees with it). */
const JSON_TYPES = ['application/json', 'application/json-patch+json', 'application/vnd.api+json', 'application/csp-report', 'application/reports+json'];

/**
 * JSON bodies for system endpoints: 400 for malformed JSON and for another type (which would be
 * dropped unread, answered as missing), 413 past `limits.jsonBytes`. No body passes, unparsed.
 */
export function jsonBody(limitBytes: number): Middleware {
  const parse = koaBody({
    json: true,
    jsonTypes: JSON_TYPES,
    urlencoded: false,
    text: false,
    multipart: false,
    jsonLimit: limitBytes,
    jsonStrict: false,
    onError: (error) => {
      throw bodyError(error, 'malformed JSON body');
    },
  });
  return (ctx, next) => {
    if (hasBody(ctx.req) && !ctx.is(JSON_TYPES)) throw createError(400, 'request body must be JSON (Content-Type: application/json)');
    return parse(ctx, next);
  };
}
