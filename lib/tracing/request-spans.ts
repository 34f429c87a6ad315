import { context, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_METHOD_ORIGINAL,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import type { Context, Middleware } from 'koa';
import { requestState } from '../core/request-state.ts';

/** The methods the semantic conventions name; any other is `_OTHER`, so span names stay few. */
const KNOWN_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE', 'QUERY']);
const CLIENT_LEFT = 499;

/** Active for the whole request, so its statements and outgoing calls are its children; named by method and the route that answered. */
export function requestSpans(tracer: Tracer): (serve: Middleware) => Middleware {
  return (serve) => (ctx, next) => {
    const parent = propagation.extract(ROOT_CONTEXT, ctx.req.headers);
    const method = KNOWN_METHODS.has(ctx.method) ? ctx.method : undefined;
    const span = tracer.startSpan(method ?? 'HTTP', { kind: SpanKind.SERVER }, parent);
    // An unsampled request keeps its trace (log lines, `traceparent` sent on) and costs no attribute.
    if (span.isRecording()) span.setAttributes(requestAttributes(ctx, method));
    let answering: unknown;
    try {
      answering = context.with(trace.setSpan(parent, span), serve, undefined, ctx, next);
    } catch (error) {
      // Thrown before the request had its state: nothing to name the span by.
      span.end();
      throw error;
    }
    if (!(answering instanceof Promise)) {
      endRequestSpan(span, ctx, method);
      return answering;
    }
    return answering.then(
      () => endRequestSpan(span, ctx, method),
      (error: unknown) => {
        endRequestSpan(span, ctx, method);
        throw error;
      },
    );
  };
}

function requestAttributes(ctx: Context, method: string | undefined): Record<string, string> {
  const url = ctx.req.url ?? '';
  const query = url.indexOf('?');
  const attributes: Record<string, string> = {
    [ATTR_HTTP_REQUEST_METHOD]: method ?? '_OTHER',
    [ATTR_URL_PATH]: query === -1 ? url : url.slice(0, query),
    [ATTR_URL_SCHEME]: ctx.protocol,
    [ATTR_NETWORK_PROTOCOL_VERSION]: ctx.req.httpVersion,
    [ATTR_CLIENT_ADDRESS]: ctx.ip,
  };
  if (method === undefined) attributes[ATTR_HTTP_REQUEST_METHOD_ORIGINAL] = ctx.method;
  const userAgent = ctx.req.headers['user-agent'];
  if (userAgent !== undefined) attributes[ATTR_USER_AGENT_ORIGINAL] = userAgent;
  return attributes;
}

function endRequestSpan(span: Span, ctx: Context, method: string | undefined): void {
  if (span.isRecording()) nameAndAnswer(span, ctx, method);
  span.end();
}

function nameAndAnswer(span: Span, ctx: Context, method: string | undefined): void {
  const { route, abandoned, requestId, requestIdFrom, tenant } = requestState(ctx);
  if (route !== undefined) {
    const path = route.route.path;
    span.updateName(route.project === undefined ? `${method ?? 'HTTP'} ${path}` : `${method ?? 'HTTP'} ${route.project} ${path}`);
    span.setAttribute(ATTR_HTTP_ROUTE, route.project === undefined ? path : `/api/${route.project}${path}`);
  }
  // 499 (nginx's), as on the log line: the client left before the answer.
  const status = abandoned ? CLIENT_LEFT : ctx.res.statusCode;
  span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
  span.setAttribute('spaceport.request_id', requestId);
  if (requestIdFrom !== undefined) span.setAttribute('spaceport.request_id_from', requestIdFrom);
  if (tenant !== undefined) span.setAttribute('spaceport.tenant', tenant);
  if (status >= 500) {
    span.setAttribute(ATTR_ERROR_TYPE, String(status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
}
