import createError from 'http-errors';
import type { Context, Middleware } from 'koa';
import { isDatabaseUnreachable } from '../db/connect.ts';
import type { Logger } from './logger.ts';
import { requestState } from './state.ts';

interface HttpErrorLike {
  status?: unknown;
  statusCode?: unknown;
  expose?: unknown;
  headers?: unknown;
  message?: unknown;
}

/**
 * The one error middleware (SPEC §7): turns whatever was thrown below into the JSON bodies of
 * the spec, logs unforeseen 5xx with the stack, and never sends the text of an unexposed error.
 */
export function errorHandler(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      if (lacksRequiredHost(ctx)) throw createError(400, 'Host header is required');
      await next();
      if (ctx.status === 404 && ctx.body == null && ctx.respond !== false) answerUnrouted(ctx);
    } catch (error) {
      answerError(ctx, error, logger);
    }
  };
}

/** HTTP/1.1 makes the Host header mandatory (RFC 9112 §3.2); HTTP/1.0 does not. */
function lacksRequiredHost(ctx: Context): boolean {
  return ctx.req.httpVersion === '1.1' && ctx.req.headers.host === undefined;
}

/**
 * Nothing answered: 404. Except CONNECT, which asks for a tunnel (the service is no proxy) and
 * whose target is a host, not a path: 405 with an empty `Allow`, no method being served there.
 */
function answerUnrouted(ctx: Context): void {
  if (ctx.method === 'CONNECT') {
    ctx.status = 405;
    ctx.set('Allow', '');
    ctx.body = { error: 'Method Not Allowed' };
  } else {
    ctx.status = 404;
    ctx.body = { error: 'Not Found' };
  }
}

/**
 * Writes the error answer for `error` onto `ctx`: `{error}` for a 4xx or an exposed 5xx (a 503
 * for an unreachable database, a 504 timeout), else the 500 body, at the error's own status.
 */
export function answerError(ctx: Context, error: unknown, logger: Logger): void {
  const { requestId, answeredBy } = requestState(ctx);
  const where = { requestId, ...answeredBy };
  if (ctx.headerSent || !ctx.writable) {
    logUnanswerable(ctx, error, logger, where);
    return;
  }
  const unreachable = isDatabaseUnreachable(error);
  const status = unreachable ? 503 : errorStatus(error);
  ctx.remove('Content-Type');
  ctx.remove('Content-Length');
  ctx.status = status;
  if (status < 500) {
    logger.info({ status, error: messageOf(error), ...where }, 'client error');
    setErrorHeaders(ctx, error);
    ctx.body = { error: messageOf(error) || 'Error' };
  } else if (unreachable) {
    logger.error({ err: error, ...where }, 'database unreachable');
    ctx.body = { error: 'database unavailable' };
  } else if ((error as HttpErrorLike).expose === true) {
    // A 5xx written for the client (busy, timed out) is a condition the service foresaw: no stack.
    logger.error({ status, error: messageOf(error), ...where }, 'server error');
    setErrorHeaders(ctx, error);
    ctx.body = { error: messageOf(error) };
  } else {
    logger.error({ err: error, ...where }, 'unhandled error');
    ctx.body = { success: false, message: 'Internal Server Error' };
  }
}

/**
 * An error that can no longer be answered. A client that hung up is routine: one line, no
 * stack, when the error is what its leaving caused (an aborted body is a 400 here, a broken
 * connection an ECONNRESET). So is a 4xx. Any other failure once the answer has begun is a real
 * one, the client gone or not (the service may have cut the answer itself).
 */
function logUnanswerable(ctx: Context, error: unknown, logger: Logger, where: Record<string, unknown>): void {
  const status = errorStatus(error);
  const fields = { status, error: messageOf(error), ...where };
  if (clientHungUp(ctx) && (status < 500 || isConnectionAbort(error))) logger.info(fields, 'client closed the connection early');
  else if (status < 500) logger.info(fields, 'client error after the response started');
  else logger.error({ err: error, ...where }, 'error after the response started');
}

/** The connection closed before the answer was complete. */
function clientHungUp(ctx: Context): boolean {
  return !ctx.res.writableFinished && (ctx.res.destroyed || ctx.req.socket.destroyed);
}

const CONNECTION_ABORTS = new Set(['ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE']);

/** An error a dropped connection raises, itself or as the cause of the handler's failure. */
function isConnectionAbort(error: unknown): boolean {
  for (let current = error, depth = 0; current !== null && typeof current === 'object' && depth < 3; depth++) {
    const { code, cause } = current as { code?: unknown; cause?: unknown };
    if (typeof code === 'string' && CONNECTION_ABORTS.has(code)) return true;
    current = cause;
  }
  return false;
}

function errorStatus(error: unknown): number {
  const { status, statusCode } = (error ?? {}) as HttpErrorLike;
  const candidate = typeof status === 'number' ? status : statusCode;
  return typeof candidate === 'number' && candidate >= 400 && candidate <= 599 ? candidate : 500;
}

function messageOf(error: unknown): string {
  const message = (error as HttpErrorLike | undefined)?.message;
  return typeof message === 'string' ? message : '';
}

function setErrorHeaders(ctx: Context, error: unknown): void {
  const headers = (error as HttpErrorLike | undefined)?.headers;
  if (headers === null || typeof headers !== 'object') return;
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (typeof value === 'string' || typeof value === 'number') ctx.set(name, String(value));
  }
}
