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
import { defaultSampler } from './sampling.ts';
import { statementSpans } from './statement-spans.ts';

const TRACER_NAME = 'spaceport';
/** The exporter would retry an unreachable collector for about ten seconds, the whole shutdown's limit. */
const FLUSH_LIMIT_MS = 2000;

/**
 * Configured by the standard `OTEL_*` variables, but for the sampler's default (`sampling.ts`); client spans for `fetch`
 * and `node:http(s)` calls. The server span of each request is the entry's (`Tracing.traced`), so the HTTP
 * instrumentation leaves incoming requests alone.
 */
export function startTracing(environment: NodeJS.ProcessEnv = process.env): Tracing {
  const propagator = propagatorFor(environment);
  const sampler = defaultSampler(environment);
  const provider = new NodeTracerProvider({
    ...(sampler === undefined ? {} : { sampler }),
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
 * The instrumentation patches `node:http(s)` only when required, and ES modules go through no `require`: requiring
 * them patches the exports both systems share, and `syncBuiltinESMExports` carries that to named imports.
 */
function patchHttpForModules(): void {
  const require = createRequire(import.meta.url);
  require('node:http');
  require('node:https');
  syncBuiltinESMExports();
}

function settledWithin(work: Promise<void>, limitMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the spans left were not sent within ${limitMs} ms`)), limitMs);
    timer.unref();
  });
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}
