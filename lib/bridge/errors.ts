import createError from 'http-errors';
import statuses from 'statuses';
import { type HttpErrorLike, isErrorStatus, showsMessage, statusOf } from '../core/errors.ts';
import { isDatabaseUnreachable } from '../db/connect.ts';
import { DatabaseBusy } from '../db/tenant-shares.ts';

/**
 * A failed handler's error, its status as Express's final handler picks it: the error's own,
 * else a 4xx/5xx set with `res.status`, else 500; a 5xx shows nothing of it. A database down
 * (SPEC §7) and a database with no connection free in time (a tenant over its share, SPEC §17.2, or the pool
 * full) are the service's to answer: passed on.
 */
export function handlerFailure(error: unknown, responseStatus: number): Error {
  if (statusOf(error) === undefined && error instanceof Error && isDatabaseUnreachable(error)) return error;
  if (error instanceof DatabaseBusy) return error;
  const status = statusOf(error) ?? (isErrorStatus(responseStatus) ? responseStatus : 500);
  if (status >= 500 && error instanceof Error) return withStatus(error, status);
  const fields = (error !== null && typeof error === 'object' ? error : {}) as HttpErrorLike;
  const message = typeof fields.message === 'string' ? fields.message : typeof error === 'string' ? error : '';
  const headers = status < 500 && fields.headers !== null && typeof fields.headers === 'object' ? fields.headers : undefined;
  return createError(status, message || String(statuses.message[status] ?? 'Error'), { expose: status < 500 && showsMessage(error), headers, cause: error });
}

/**
 * The handler's own error with the answer's status, never exposed: the log shows its type,
 * stack and cause once, where a wrapping error would print its message twice, the bridge's frames first.
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
