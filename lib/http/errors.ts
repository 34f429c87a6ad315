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
 * the spec, logs 5xx with the stack, and never sends the text of an unexposed error.
 */
export function errorHandler(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body == null && ctx.respond !== false) {
        ctx.status = 404;
        ctx.body = { error: 'Not Found' };
      }
    } catch (error) {
      answerError(ctx, error, logger);
    }
  };
}

/** Writes the error answer for `error` onto `ctx`; usable by any code that owns the response. */
export function answerError(ctx: Context, error: unknown, logger: Logger): void {
  const status = errorStatus(error);
  const requestId = requestState(ctx).requestId;
  if (ctx.headerSent || !ctx.writable) {
    logger.error({ err: error, requestId }, 'error after the response started');
    return;
  }
  ctx.remove('Content-Type');
  ctx.remove('Content-Length');
  ctx.status = status;
  if (status === 500) {
    logger.error({ err: error, requestId }, 'unhandled error');
    ctx.body = { success: false, message: 'Internal Server Error' };
    return;
  }
  if (status >= 500) logger.error({ err: error, requestId }, 'server error');
  else logger.info({ status, error: (error as HttpErrorLike).message, requestId }, 'client error');
  setErrorHeaders(ctx, error);
  ctx.body = { error: publicMessage(error, status) };
}

function errorStatus(error: unknown): number {
  if (isDatabaseUnreachable(error)) return 503;
  const { status, statusCode } = (error ?? {}) as HttpErrorLike;
  const candidate = typeof status === 'number' ? status : statusCode;
  return typeof candidate === 'number' && candidate >= 400 && candidate <= 599 ? candidate : 500;
}

function publicMessage(error: unknown, status: number): string {
  if (status === 503 && isDatabaseUnreachable(error)) return 'database unavailable';
  const { message, expose } = (error ?? {}) as HttpErrorLike;
  const exposed = expose === true || (expose === undefined && status < 500);
  return exposed && typeof message === 'string' && message !== '' ? message : defaultMessage(status);
}

function defaultMessage(status: number): string {
  return status === 503 ? 'Service Unavailable' : status === 504 ? 'Gateway Timeout' : 'Error';
}

function setErrorHeaders(ctx: Context, error: unknown): void {
  const headers = (error as HttpErrorLike | undefined)?.headers;
  if (headers === null || typeof headers !== 'object') return;
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (typeof value === 'string' || typeof value === 'number') ctx.set(name, String(value));
  }
}
