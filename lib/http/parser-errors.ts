import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type RequestListener, STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import createError from 'http-errors';
import { errorAnswer } from '../core/errors.ts';
import type { Logger } from '../logger/index.ts';
import { answerBeforeItsBody, closeOnceWritten } from './body-pace.ts';

/** Node's own statuses for what its parser refuses; anything else is a plain 400. */
const STATUS_BY_CODE: Readonly<Record<string, number>> = {
  HPE_HEADER_OVERFLOW: 431,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/**
 * A request Node's HTTP parser refuses (a malformed request line or header, headers too large)
 * never reaches Koa, and Node would answer it with a bare status line. Answered here the way
 * every other error is (SPEC §2.4, §7): a JSON `{error}` body, an `X-Request-Id`, one log line.
 * Except in the rest of a body whose request was answered without reading it: that connection is
 * closed with nothing written, the request having had its answer and its log line.
 */
export function answerParserErrors(server: Server, logger: Logger): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // In the rest of a body the service answered without reading, it would be a second answer:
    // the connection closes once the first is all written (it may be on its way still).
    const answered = answerBeforeItsBody(socket);
    if (answered !== undefined) {
      closeOnceWritten(answered, socket);
      return;
    }
    answerAndClose(socket, STATUS_BY_CODE[error.code ?? ''] ?? 400, logger, { error: error.code });
  });
}

/**
 * `PRI <path>` with no HTTP version parses as a request, but it is how the HTTP/2 connection
 * preface begins, and Node destroys its connection as soon as the request handler returns: an
 * answer the app writes later never leaves. It gets the parser errors' 400 at once instead, if
 * it is first in line: after pipelined requests still unanswered (Node then holds its response
 * back, without a socket), a 400 written now would reach the client as the answer to the first
 * of them, so the connection closes unanswered, as Node closes it.
 */
export function answerHttp2Preface(handler: RequestListener, logger: Logger): RequestListener {
  return (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'PRI') return handler(request, response);
    const fields = { method: 'PRI', url: request.url, error: 'HTTP/2 connection preface' };
    if (response.socket) return answerAndClose(request.socket, 400, logger, fields);
    request.socket.destroy();
    logger.info({ ...fields, status: 499, unanswered: 'earlier pipelined requests were still unanswered' }, 'request');
  };
}

/** Writes a complete error answer straight to the socket and closes it; logs one line. */
function answerAndClose(socket: Duplex, requestedStatus: number, logger: Logger, fields: Record<string, unknown>): void {
  const { status, body: answer } = errorAnswer(createError(requestedStatus, STATUS_CODES[requestedStatus] ?? 'Bad Request'));
  const requestId = randomUUID();
  const body = JSON.stringify(answer);
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'Connection: close',
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  logger.info({ ...fields, status, requestId }, 'request');
}
