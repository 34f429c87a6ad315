import createError from 'http-errors';
import statuses from 'statuses';
import { type HttpErrorLike, isErrorStatus, statusOf } from '../core/errors.ts';
import { isDatabaseUnreachable } from '../db/connect.ts';
import { TenantShareBusy } from '../db/tenant-shares.ts';

/**
 * The error a failed handler answers with, its status chosen as Express's final handler does:
 * the error's own `status`/`statusCode` when 400-599, else a 4xx/5xx the handler had already
 * set with `res.status`, else 500. A 4xx shows its message and headers; a 5xx shows nothing of
 * the original. A database that is down is the service's to answer (503, SPEC §7), and so is
 * a tenant over its share of the pool (503 naming the limit, SPEC §17.2): those errors pass on
 * as they are.
 */
export function handlerFailure(error: unknown, responseStatus: number): Error {
  if (statusOf(error) === undefined && error instanceof Error && isDatabaseUnreachable(error)) return error;
  if (error instanceof TenantShareBusy) return error;
  const status = statusOf(error) ?? (isErrorStatus(responseStatus) ? responseStatus : 500);
  if (status >= 500 && error instanceof Error) return withStatus(error, status);
  const fields = (error !== null && typeof error === 'object' ? error : {}) as HttpErrorLike;
  const message = typeof fields.message === 'string' ? fields.message : typeof error === 'string' ? error : '';
  const headers = status < 500 && fields.headers !== null && typeof fields.headers === 'object' ? fields.headers : undefined;
  return createError(status, message || String(statuses.message[status] ?? 'Error'), { expose: status < 500, headers, cause: error });
}

/**
 * The handler's own error, seen with the status of the answer and never exposed: the log shows
 * its type, message, stack (the route file's frame first) and cause, each once, where a wrapping
 * error would print its message twice and the bridge's frames first. The original is untouched.
 */
function withStatus(error: Error, status: number): Error {
  const field = (value: unknown) => ({ value, enumerable: true });
  return Object.create(error, { status: field(status), statusCode: field(status), expose: field(false) }) as Error;
}

/** How a header changes: Node names it in the error it throws once the headers are out. */
export type HeaderChange = 'set' | 'remove';

/** What Node throws for a header change once the headers are out; Express lets it through. */
export function headersSentError(verb: HeaderChange): Error {
  return Object.assign(new Error(`Cannot ${verb} headers after they are sent to the client`), { code: 'ERR_HTTP_HEADERS_SENT' });
}
