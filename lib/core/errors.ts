import { validateHeaderName, validateHeaderValue } from 'node:http';
import createError from 'http-errors';
import type { Context } from 'koa';
import statuses from 'statuses';
import { isDatabaseUnreachable, isStatementTimeout } from '../db/connect.ts';
import { boundedText, type Logger } from '../logger/index.ts';
import { requestPlace, requestState } from './request-state.ts';

/**
 * Errors and their answers (SPEC §7): code throws errors carrying `status`, `expose` and headers;
 * `answerError` alone decides the status of what was thrown and writes the error bodies.
 */

/** The fields an error thrown anywhere may carry for its answer, each still to be checked (`statusOf`). */
export interface HttpErrorLike {
  status?: unknown;
  statusCode?: unknown;
  expose?: unknown;
  headers?: unknown;
  message?: unknown;
}

/** 404, except CONNECT, which asks for a tunnel to a host (no proxy here): 405 with an empty `Allow`. */
export function nothingAnswers(method: string): Error {
  return method === 'CONNECT' ? methodNotAllowed([]) : createError(404, 'Not Found');
}

/** 405 with `Allow`: the path is known, the method is not (SPEC §7). */
export function methodNotAllowed(allowed: Iterable<string>): Error {
  return createError(405, 'Method Not Allowed', { headers: { Allow: [...new Set(allowed)].join(', ') } });
}

/** A field a route's declared schema refuses: where (`body.email`, `query.page`, `params.id`) and why. */
export interface FieldProblem {
  readonly path: string;
  readonly message: string;
}

/**
 * The longest path or message a refusal repeats (UTF-16 units): both may hold the request's own
 * keys (`body["<200 kB key>"]`), which would otherwise come back whole, answered and logged.
 */
const PROBLEM_TEXT_MAX = 300;

/** 400 for a request its route's schemas refuse (SPEC §8.13): `{error, errors}`, `error` the first as `path: message`. */
export class InvalidRequest extends Error {
  readonly status = 400;
  readonly expose = true;
  readonly problems: readonly FieldProblem[];

  constructor(given: readonly FieldProblem[]) {
    const problems = given.map(({ path, message }) => Object.freeze({ path: shortened(path), message: shortened(message) }));
    const [first] = problems;
    super(first === undefined ? 'invalid request' : `${first.path}: ${first.message}`);
    this.name = 'InvalidRequest';
    this.problems = Object.freeze(problems);
  }
}

/** `text` cut to PROBLEM_TEXT_MAX with an ellipsis, never between the two halves of a character. */
function shortened(text: string): string {
  if (text.length <= PROBLEM_TEXT_MAX) return text;
  const cut = text.slice(0, PROBLEM_TEXT_MAX - 1);
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

/** 401 with the Bearer challenge of system authentication (SPEC §5.3). */
export function unauthorized(message: string): Error {
  return createError(401, message, { headers: { 'WWW-Authenticate': 'Bearer' } });
}

/** A body parser's failure for the client: a limit 413, an unreadable encoding 415, anything else 400. */
export function bodyError(error: Error, malformed: string): Error {
  const { status, httpCode } = error as { status?: unknown; httpCode?: unknown };
  const code = typeof status === 'number' ? status : httpCode;
  if (code === 413) return createError(413, tooLargeMessage(error));
  if (code === 415) return createError(415, 'unsupported content encoding');
  if (error.message === 'Object contains forbidden prototype property') {
    return createError(400, 'request body must not hold a "__proto__" key');
  }
  return createError(400, malformed);
}

function tooLargeMessage(error: Error): string {
  if (/maxFiles\b/.test(error.message)) return 'too many files';
  if (error.message === 'file too large' || /maxFileSize|maxTotalFileSize/.test(error.message)) return 'file too large';
  return 'request body too large';
}

/** The error status an error names (`status`, else `statusCode`) when it is one, 400-599. */
export function statusOf(error: unknown): number | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const { status, statusCode } = error as HttpErrorLike;
  if (typeof status === 'number' && isErrorStatus(status)) return status;
  if (typeof statusCode === 'number' && isErrorStatus(statusCode)) return statusCode;
  return undefined;
}

export function isErrorStatus(status: number): boolean {
  return status >= 400 && status < 600;
}

/** The status, body and headers an error is answered with, and whether it gets a log line of its own. */
interface ErrorAnswer {
  status: number;
  body: { error: string; errors?: readonly FieldProblem[] } | { success: false; message: string };
  headers: Readonly<Record<string, string | string[]>>;
  /** Names of the error's headers Node would refuse to send (a CR, LF or NUL, a character beyond latin1, a bad name): left out. */
  dropped: readonly string[];
  /** A 5xx gets an error line beside the request line; unforeseen ones with their stack (SPEC §7). */
  log?: { message: string; stack: boolean };
  /** For the request's log line, the message a 4xx answered with its status text instead. */
  hidden?: string;
}

/** SPEC §7's answer: `{error}` for a 4xx or an exposed 5xx (an unreachable database 503), else the bare 500. */
export function errorAnswer(error: unknown): ErrorAnswer {
  if (statusOf(error) === undefined && isStatementTimeout(error)) {
    // The database answers: the statement asked too much of it, which "database unavailable" would hide from its author.
    return { status: 503, body: { error: 'database statement cancelled at its time limit' }, headers: {}, dropped: [], log: { message: 'database statement cancelled at its time limit', stack: true } };
  }
  if (statusOf(error) === undefined && isDatabaseUnreachable(error)) {
    return { status: 503, body: { error: 'database unavailable' }, headers: {}, dropped: [], log: { message: 'database unreachable', stack: true } };
  }
  const status = statusOf(error) ?? 500;
  const { headers, dropped } = headersOf(error);
  if (error instanceof InvalidRequest) return { status, body: { error: error.message, errors: error.problems }, headers, dropped };
  if (status < 500) {
    if (showsMessage(error)) return { status, body: { error: messageOf(error) || 'Error' }, headers, dropped };
    return { status, body: { error: statuses.message[status] ?? 'Error' }, headers, dropped, hidden: messageOf(error) };
  }
  // A 5xx written for the client (busy, timed out) is a condition the service foresaw: no stack.
  if ((error as HttpErrorLike).expose === true) return { status, body: { error: messageOf(error) }, headers, dropped, log: { message: 'server error', stack: false } };
  return { status, body: { success: false, message: 'Internal Server Error' }, headers: {}, dropped: [], log: { message: 'unhandled error', stack: true } };
}

/** Answers `error` on `ctx`, or records it once the answer has begun; a 5xx gets a log line of its own. */
export function answerError(ctx: Context, error: unknown, logger: Logger): void {
  const state = requestState(ctx);
  const where = requestPlace(state);
  if (ctx.headerSent || !ctx.writable) {
    recordUnanswerable(ctx, error, logger, where);
    return;
  }
  const answer = errorAnswer(error);
  ctx.remove('Content-Type');
  ctx.remove('Content-Length');
  ctx.status = answer.status;
  ctx.set(answer.headers);
  ctx.body = answer.body;
  state.failure = boundedText(answer.hidden || ('error' in answer.body ? answer.body.error : answer.body.message));
  if (answer.log) logger.error(answer.log.stack ? { err: error, ...where } : { status: answer.status, error: messageOf(error), ...where }, answer.log.message);
  // The names only: a value may hold anything, a secret included.
  if (answer.dropped.length > 0) logger.error({ status: answer.status, headers: answer.dropped, ...where }, 'invalid headers of an error left out of its answer');
}

/**
 * An error that can no longer be answered. A 4xx, or the error a client's hanging up caused
 * (an aborted body's 400, an ECONNRESET), is routine: the request line tells it. Any other
 * failure is real, the client gone or not (the service may have cut the answer itself).
 */
function recordUnanswerable(ctx: Context, error: unknown, logger: Logger, where: Record<string, unknown>): void {
  const state = requestState(ctx);
  const status = statusOf(error) ?? 500;
  if (clientHungUp(ctx) && (status < 500 || isConnectionAbort(error))) {
    state.abandoned = true;
    state.failure = 'client closed the connection early';
  } else if (status < 500) {
    state.failure = boundedText(messageOf(error));
  } else {
    state.failure = boundedText(messageOf(error));
    logger.error({ err: error, ...where }, 'error after the response started');
  }
}

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

/**
 * Whether a 4xx answers its own message (SPEC §7) rather than its status text: not when the error
 * says `expose: false` (as `send` marks a missing file's), nor for a Node system error, whose
 * text names a path or a host (it carries `syscall`), unless it says `expose: true`.
 */
export function showsMessage(error: unknown): boolean {
  const fields = error as (HttpErrorLike & { syscall?: unknown }) | null | undefined;
  if (fields?.expose === true) return true;
  return fields?.expose !== false && typeof fields?.syscall !== 'string';
}

/** The message an error carries, or nothing: never the error's other fields (a URL, a password). */
export function messageOf(error: unknown): string {
  const message = (error as HttpErrorLike | undefined)?.message;
  return typeof message === 'string' ? message : '';
}

/**
 * The headers an error carries, as Node can send them (text, numbers, lists of them). What Node
 * would refuse, or cannot be read (a throwing getter), is left out and named, so that it can
 * neither fail the answer nor split it.
 */
function headersOf(error: unknown): { headers: Record<string, string | string[]>; dropped: string[] } {
  const headers: Record<string, string | string[]> = {};
  const dropped: string[] = [];
  let given: Array<[string, unknown]>;
  try {
    const carried = (error as HttpErrorLike | undefined)?.headers;
    if (carried === null || typeof carried !== 'object') return { headers, dropped };
    given = Object.entries(carried);
  } catch {
    return { headers, dropped: ['(headers that could not be read)'] };
  }
  for (const [name, value] of given) {
    const sendable = sendableValue(name, value);
    if (sendable !== undefined) headers[name] = sendable;
    if (sendable === undefined || (Array.isArray(value) && sendable.length < value.length)) dropped.push(name);
  }
  return { headers, dropped };
}

/** `value` as Node can send it under `name`: the valid items of a list; undefined when nothing is. */
function sendableValue(name: string, value: unknown): string | string[] | undefined {
  const items = (Array.isArray(value) ? value : [value]).filter((item) => typeof item === 'string' || typeof item === 'number').map(String);
  const valid = items.filter((item) => isSendable(name, item));
  if (valid.length === 0) return undefined;
  return Array.isArray(value) ? valid : valid[0];
}

function isSendable(name: string, value: string): boolean {
  try {
    validateHeaderName(name);
    validateHeaderValue(name, value);
    return true;
  } catch {
    return false;
  }
}
