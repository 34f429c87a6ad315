import { ServerResponse, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

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
