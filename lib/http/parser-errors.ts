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
 * A request Node's parser refuses never reaches Koa, and Node would answer a bare status line:
 * answered here as every other error (SPEC §2.4, §7), a JSON `{error}`, an `X-Request-Id`, a log line.
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
 * `PRI <path>` (the HTTP/2 preface) parses as a request, but Node destroys its connection as soon
 * as the handler returns, so it gets the parser errors' 400 at once, if first in line. Behind
 * pipelined requests still unanswered that 400 would answer the first of them: the connection
 * closes unanswered, as Node closes it.
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
