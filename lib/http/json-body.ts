import createError from 'http-errors';
import { koaBody } from 'koa-body';
import type { Middleware } from 'koa';

/** JSON bodies for system endpoints: 400 for malformed JSON, 413 past `limits.jsonBytes`. */
export function jsonBody(limitBytes: number): Middleware {
  return koaBody({
    json: true,
    urlencoded: false,
    text: false,
    multipart: false,
    jsonLimit: limitBytes,
    jsonStrict: false,
    onError: (error) => {
      const status = (error as { status?: number }).status;
      if (status === 413) throw createError(413, 'request body too large');
      if (status === 415) throw createError(415, 'unsupported content encoding');
      throw createError(400, 'malformed JSON body');
    },
  });
}
