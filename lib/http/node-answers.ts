import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type RequestListener, STATUS_CODES, type Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
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

/**
 * Node hands CONNECT to the 'connect' event, and with no listener drops the connection unanswered.
 * The service is no proxy: the request goes through the app like any other (405, a log line),
 * then the connection closes, since after CONNECT it no longer carries HTTP.
 */
export function answerConnect(server: Server, handler: RequestListener): void {
  const answering = answersInProgress(server);
  server.on('connect', (request: IncomingMessage, tunnel: Duplex) => {
    const socket = tunnel as Socket;
    const answer = () => {
      if (socket.destroyed) return;
      const response = new ServerResponse(request);
      response.shouldKeepAlive = false;
      response.assignSocket(socket);
      response.once('finish', () => socket.destroySoon());
      handler(request, response);
    };
    // Pipelined behind requests still being answered, the CONNECT waits its turn: the socket
    // belongs to each of their answers until it is written (assigning it twice throws, out of
    // any request). Node writes them in order and lets the socket go before an answer's 'close',
    // so once the last of them has closed, the socket is free.
    const last = answering.get(socket);
    if (last === undefined || last.closed) answer();
    else last.once('close', answer);
  });
}

/**
 * The last answer each connection was handed (Node's own record, `_httpMessage`, is private). An
 * unknown `Expect` reaches 'checkExpectation' when the server listens (else Node answers 417).
 */
function answersInProgress(server: Server): WeakMap<Socket, ServerResponse> {
  const answering = new WeakMap<Socket, ServerResponse>();
  const record = (request: IncomingMessage, response: ServerResponse) => void answering.set(request.socket, response);
  server.on('request', record);
  if (server.listenerCount('checkExpectation') > 0) server.on('checkExpectation', record);
  return answering;
}
