import { createServer } from 'node:http';
import { HEARTBEAT_PATH, listenFromEnvironment } from './common.ts';

/** The floor: the heartbeat answered by `node:http` with nothing in between. */
const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === HEARTBEAT_PATH) {
    response.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': '7' });
    response.end('success');
    return;
  }
  response.writeHead(404, { 'Content-Type': 'application/json' });
  response.end('{"error":"Not Found"}');
});

listenFromEnvironment(server);
