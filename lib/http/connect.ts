import { ServerResponse, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * Node hands a CONNECT request to the server's 'connect' event instead of the request handler,
 * and with no listener it drops the connection unanswered. The service is no proxy: the request
 * goes through the app like any other method it does not serve (405 with `Allow` on a known
 * path, 404 elsewhere, with an `X-Request-Id` and a log line), then the connection closes, since
 * after CONNECT it no longer carries HTTP.
 */
export function answerConnect(server: Server, handler: RequestListener): void {
  server.on('connect', (request: IncomingMessage, tunnel: Duplex) => {
    const socket = tunnel as Socket;
    const response = new ServerResponse(request);
    response.shouldKeepAlive = false;
    response.assignSocket(socket);
    response.once('finish', () => socket.destroySoon());
    handler(request, response);
  });
}
