import { createServer, type IncomingMessage } from 'node:http';
import { listenOnLoopback } from './koa-app.ts';

/** An attribute value as OTLP/JSON writes it. */
interface AnyValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}

/** One span as the receiver decoded it, with its attributes flattened. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP's SpanKind: 2 server, 3 client. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, string | number | boolean | undefined>>;
  /** The `service.name` of the resource that sent it. */
  readonly serviceName: string | undefined;
  /** The W3C `tracestate` the span carried; empty when none. */
  readonly traceState: string;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: what `OTEL_EXPORTER_OTLP_ENDPOINT` names. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** The content types the exports came with. */
  readonly contentTypes: string[];
  close(): Promise<void>;
}

interface ExportRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key: string; value: AnyValue }> };
    scopeSpans?: Array<{ spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; traceState?: string; name: string; kind: number; attributes?: Array<{ key: string; value: AnyValue }> }> }>;
  }>;
}

/** A real OTLP/HTTP trace receiver on loopback, taking the JSON encoding at `POST /v1/traces`. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((request, response) => {
    void bodyOf(request).then((body) => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      contentTypes.push(request.headers['content-type'] ?? '');
      spans.push(...decoded(JSON.parse(body) as ExportRequest));
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const { url, close } = await listenOnLoopback(server);
  return { url, spans, contentTypes, close };
}

function decoded(request: ExportRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const serviceName = flattened(resourceSpans.resource?.attributes)['service.name'];
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        kind: span.kind,
        attributes: flattened(span.attributes),
        serviceName: typeof serviceName === 'string' ? serviceName : undefined,
        traceState: span.traceState ?? '',
      })),
    );
  });
}

function flattened(attributes: Array<{ key: string; value: AnyValue }> = []): Record<string, string | number | boolean | undefined> {
  const result: Record<string, string | number | boolean | undefined> = {};
  for (const { key, value } of attributes) {
    result[key] = value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue;
  }
  return result;
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
