import { ServerResponse, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * Node hands a CONNECT request to the server's 'connect' event instead of the request handler,
 * and with no listener it drops the connection unanswered. The service is no proxy: the request
 * goes through the app like any other (405 with the `Allow` of its target, an `X-Request-Id`, a
 * log line), then the connection closes, since after CONNECT it no longer carries HTTP.
 */
export function answerConnect(server: Server, handler: RequestListener): void {
  server.on('connect', (request: IncomingMessage, tunnel: Duplex) => {
    const socket = tunnel as SocketAnswering;
    const answer = () => {
      const response = new ServerResponse(request);
      response.shouldKeepAlive = false;
      response.assignSocket(socket);
      response.once('finish', () => socket.destroySoon());
      handler(request, response);
    };
    // Pipelined behind requests still being answered, the CONNECT waits its turn: the socket
    // belongs to each of their answers until it is written (assigning it twice throws, out of
    // any request), and Node hands it to the next one as the last finishes.
    const answerWhenFree = () => {
      const current = socket._httpMessage;
      if (current) current.once('finish', answerWhenFree);
      else answer();
    };
    answerWhenFree();
  });
}

/** Node's own record of the answer a connection is writing (no public API tells). */
type SocketAnswering = Socket & { _httpMessage?: ServerResponse | null };
