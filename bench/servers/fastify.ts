import { createServer } from 'node:http';
import Fastify, { LogController } from 'fastify';
import pino from 'pino';
import { HEARTBEAT_PATH, listenFromEnvironment } from './common.ts';
import { pool, rateLimitHeaders, requestIdFrom, tenantExists } from './same-work.ts';

/**
 * The heartbeat as a Fastify 5 app doing the service's per-request work the Fastify way: the
 * request id from `genReqId`, echoed in `X-Request-Id`, one log line from an `onResponse` hook through the request's own
 * logger (Fastify's two default lines turned off), the tenant checked in an `onRequest` hook and
 * RateLimit-* headers in the route's `preHandler`.
 */
declare module 'fastify' {
  interface FastifyRequest {
    tenant: string;
  }
}

const app = Fastify({
  loggerInstance: pino({ base: undefined }),
  logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
  genReqId: (request) => requestIdFrom(headerValue(request.headers['x-request-id'])),
  serverFactory: (handler) => createServer(handler),
});

// Declared up front, as Fastify asks, so every request object keeps one shape.
app.decorateRequest('tenant', '');

app.addHook('onRequest', async (request, reply) => {
  reply.header('X-Request-Id', request.id);
  const name = headerValue(request.headers.tenant) || 'default';
  if (!(await tenantExists(name))) return reply.code(400).send({ error: 'unknown tenant' });
  request.tenant = name;
});

app.addHook('onResponse', async (request, reply) => {
  const ms = Math.round(reply.elapsedTime * 100) / 100;
  request.log.info({ method: request.method, url: request.url, status: reply.statusCode, ms, tenant: request.tenant }, 'request');
});

app.get(HEARTBEAT_PATH, {
  preHandler: async (request, reply) => {
    reply.headers(await rateLimitHeaders(`${request.ip}|${request.tenant}`));
  },
  handler: async () => 'success',
});

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

await app.ready();
listenFromEnvironment(app.server, () => pool.end());
