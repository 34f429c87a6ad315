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

/**
 * Writes the error answer for `error` onto `ctx`: `{error}` for a 4xx or an exposed 5xx (a 503
 * for an unreachable database, a 504 timeout), else the 500 body, at the error's own status.
 */
export function answerError(ctx: Context, error: unknown, logger: Logger): void {
  const { requestId, answeredBy } = requestState(ctx);
  const where = { requestId, ...answeredBy };
  if (ctx.headerSent || !ctx.writable) {
    logger.error({ err: error, ...where }, 'error after the response started');
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
    logger.error({ err: error, ...where }, 'server error');
    setErrorHeaders(ctx, error);
    ctx.body = { error: messageOf(error) };
  } else {
    logger.error({ err: error, ...where }, 'unhandled error');
    ctx.body = { success: false, message: 'Internal Server Error' };
  }
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
