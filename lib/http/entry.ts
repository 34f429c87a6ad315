import { randomUUID } from 'node:crypto';
import createError from 'http-errors';
import type { Context, Middleware } from 'koa';
import type { Area } from '../core/area.ts';
import { answerError, nothingAnswers } from '../core/errors.ts';
import { requestLineWriter, type Logger } from '../logger/index.ts';
import { newRequestState, requestState, serveWithState } from '../core/request-state.ts';
import type { Runtime } from '../core/runtime.ts';
import { type BodyWatch, BodyWatcher } from './body-pace.ts';
import type { Pace } from './pace.ts';

export interface EntryOptions {
  logger: Logger;
  runtime?: Runtime;
  /** By first path segment, in lower case (paths match case-insensitively, SPEC §8.2). */
  areas: ReadonlyMap<string, Area>;
  /** What answers every other URL. */
  otherwise: Area;
  /** How fast a request body must arrive (`PACE`; tests shorten it). */
  bodyPace?: Pace;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const CLIENT_LEFT = 499;
const NO_NAMES: ReadonlySet<string> = new Set();
/** Query names whose values are credentials (`usertoken`, `access_token`, `pwd`, `jwt`, `sig`, an OAuth `code`, a CAS `ticket`, `bearer`...). */
const SECRET_QUERY_KEY = /token|pass|pwd|secret|key|jwt|auth|sig|credential|session|^code$|ticket|bearer/i;
/** A JWT (or JWE) whatever the name it is sent under: base64url segments, the first a JSON object's (`{"` is `eyJ`). */
const TOKEN_SHAPED = /^eyJ[\w-]*(\.[\w-]*){2,4}$/;

/**
 * The one way into the service: gives the request its id and state, routes it by its path's
 * first segment to its area, answers whatever it throws (SPEC §7), writes its log line (SPEC
 * §2.4). An area answering without waiting, for a request without a body, costs no promise.
 */
export function requestEntry({ logger, runtime, areas, otherwise, bodyPace }: EntryOptions): Middleware {
  const bodies = new BodyWatcher(bodyPace);
  // A request line holds only the fields below, none a credential (`redactedUrl` redacts the query).
  const writeLine = requestLineWriter(logger);
  const metrics = runtime?.metrics;
  const finish = (ctx: Context, started: number, body: BodyWatch | undefined) => {
    if (requestState(ctx).failure === undefined && isUnanswered(ctx)) answerError(ctx, nothingAnswers(ctx.method), logger);
    body?.answered();
    const { requestId, requestIdFrom, tenant, caller, route, failure, abandoned } = requestState(ctx);
    const ms = performance.now() - started;
    // 499 (nginx's): the client left before the answer, whose status it never saw.
    const status = abandoned ? CLIENT_LEFT : ctx.res.statusCode;
    metrics?.requestAnswered(ctx.method, route, status, ms / 1000);
    writeLine({
      method: ctx.method,
      url: redactedUrl(ctx.originalUrl, route?.credentialQuery),
      status,
      ms: Math.round(ms * 100) / 100,
      tenant,
      requestId,
      requestIdFrom,
      uid: caller?.uid,
      project: route?.project,
      route: route?.name,
      error: failure,
    });
  };
  const fail = (ctx: Context, started: number, error: unknown, body: BodyWatch | undefined) => {
    requestState(ctx).givenUp = true;
    answerError(ctx, error, logger);
    finish(ctx, started, body);
  };
  const serve: Middleware = (ctx) => {
    const started = performance.now();
    const offered = ctx.get('X-Request-Id');
    const fromCaller = REQUEST_ID.test(offered);
    const requestId = fromCaller ? offered : randomUUID();
    ctx.set('X-Request-Id', requestId);
    const body = bodies.watch(ctx.req, ctx.res);
    const state = newRequestState(requestId, runtime, undefined, fromCaller ? 'caller' : 'service');
    // Sent whole or cut off: what the handler still does with `db` has no request to act for (SPEC §17.1).
    // 'finish' comes a tick before 'close', and the bridge's `res` relays it to the handler's listeners.
    const end = () => {
      state.ended = true;
    };
    ctx.res.once('finish', end);
    ctx.res.once('close', end);
    return serveWithState(ctx, state, () => {
      let answering: Promise<void> | void;
      try {
        answering = areaOf(ctx, areas, otherwise)(ctx);
      } catch (error) {
        return fail(ctx, started, error, body);
      }
      if (answering === undefined) return finish(ctx, started, body);
      return (body === undefined ? answering : body.race(answering)).then(
        () => finish(ctx, started, body),
        (error: unknown) => fail(ctx, started, error, body),
      );
    });
  };
  // Chosen once: without traces, the request path has no trace of them.
  return runtime?.tracing === undefined ? serve : runtime.tracing.traced(serve);
}

function areaOf(ctx: Context, areas: ReadonlyMap<string, Area>, otherwise: Area): Area {
  if (ctx.req.httpVersion === '1.1' && ctx.req.headers.host === undefined) return missingHost;
  // A CONNECT's target is a host (`example.com:443`), which has no path at all.
  const path = ctx.path as string | null;
  if (path === null || !path.startsWith('/')) return otherwise;
  const end = path.indexOf('/', 1);
  return areas.get((end === -1 ? path.slice(1) : path.slice(1, end)).toLowerCase()) ?? otherwise;
}

/** HTTP/1.1 makes the Host header mandatory (RFC 9112 §3.2); HTTP/1.0 does not. */
const missingHost: Area = () => {
  throw createError(400, 'Host header is required');
};

/** The area let the request through unanswered (a handler's `next()` with nothing after it). */
function isUnanswered(ctx: Context): boolean {
  return ctx.status === 404 && ctx.body == null && ctx.respond !== false && !ctx.res.headersSent;
}

/** The URL with the values of credential-like query names, those the route declares, and tokens, redacted. */
function redactedUrl(url: string, credentialQuery: ReadonlySet<string> = NO_NAMES): string {
  const query = url.indexOf('?');
  if (query === -1) return url;
  const pairs = url.slice(query + 1).split('&').map((pair) => {
    const equals = pair.indexOf('=');
    const name = equals === -1 ? pair : pair.slice(0, equals);
    const decoded = decodedName(name);
    const secret = SECRET_QUERY_KEY.test(decoded) || credentialQuery.has(decoded) || (equals !== -1 && TOKEN_SHAPED.test(decodedName(pair.slice(equals + 1))));
    return secret ? `${name}=[redacted]` : pair;
  });
  return `${url.slice(0, query)}?${pairs.join('&')}`;
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    return name;
  }
}
