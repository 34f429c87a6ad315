import { createServer } from 'node:http';
import { listenFromEnvironment } from './common.ts';

/**
 * Where the traced service exports its spans (OTLP/HTTP): every `POST /v1/traces` is read to
 * its end and answered 200 with an empty export response, as a collector would; nothing is kept.
 */
const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    const accepted = request.method === 'POST' && request.url === '/v1/traces';
    response.writeHead(accepted ? 200 : 404, { 'Content-Type': accepted ? (request.headers['content-type'] ?? 'application/json') : 'text/plain' });
    response.end(accepted && request.headers['content-type'] === 'application/json' ? '{}' : '');
  });
});

listenFromEnvironment(server);
