import { createRequire, syncBuiltinESMExports } from 'node:module';
import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Tracing } from './tracing.ts';
import { activeTraceFields } from './log-fields.ts';
import { propagatorFor } from './propagation.ts';
import { requestSpans } from './request-spans.ts';
import { statementSpans } from './statement-spans.ts';

const TRACER_NAME = 'spaceport';
/**
 * How long the spans still waiting may take to be sent on shutdown: the exporter retries an
 * unreachable collector for about ten seconds, the whole shutdown's limit.
 */
const FLUSH_LIMIT_MS = 2000;

/**
 * Starts OpenTelemetry for the process, configured by the standard `OTEL_*` variables (endpoint,
 * headers, sampler, batching, service name and resource attributes): the provider with its
 * AsyncLocalStorage context manager and W3C propagation, the OTLP/HTTP exporter
 * (JSON), and the client spans of a handler's outgoing calls by `fetch` (undici) and by
 * `node:http`/`node:https`. The server span of each request is the entry's (`Tracing.traced`),
 * so the HTTP instrumentation leaves incoming requests alone. What is read from a request and
 * sent on is `OTEL_PROPAGATORS`'s choice (`propagatorFor`), checked before anything starts.
 */
export function startTracing(environment: NodeJS.ProcessEnv = process.env): Tracing {
  const propagator = propagatorFor(environment);
  const provider = new NodeTracerProvider({
    resource: defaultResource()
      .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'spaceport' }))
      .merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register({ propagator });
  registerInstrumentations({
    instrumentations: [new HttpInstrumentation({ disableIncomingRequestInstrumentation: true }), new UndiciInstrumentation()],
  });
  patchHttpForModules();
  const tracer = trace.getTracer(TRACER_NAME);
  return {
    traced: requestSpans(tracer),
    traceStatement: statementSpans(tracer),
    logFields: activeTraceFields,
    shutdown: () => settledWithin(provider.shutdown(), FLUSH_LIMIT_MS),
  };
}

/**
 * The HTTP instrumentation patches `node:http` and `node:https` when they are required after it
 * is registered; this service and its projects import them as ES modules, which go through no
 * `require`. Requiring them here patches the one exports object both module systems share, and
 * `syncBuiltinESMExports` carries the patched functions to named imports (`import { request }`).
 */
function patchHttpForModules(): void {
  const require = createRequire(import.meta.url);
  require('node:http');
  require('node:https');
  syncBuiltinESMExports();
}

/** `work`, or a failure once `limitMs` has passed without it settling. */
function settledWithin(work: Promise<void>, limitMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the spans left were not sent within ${limitMs} ms`)), limitMs);
    timer.unref();
  });
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}
