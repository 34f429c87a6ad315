import { type Context, type TextMapPropagator, trace } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { ConfigError } from '../config/index.ts';

const traceContext = new W3CTraceContextPropagator();

/** The `traceparent` is continued, the `tracestate` dropped: a caller's vendors' entries (up to 512 bytes) would go on verbatim to whatever a route calls. */
const callerTraceContext: TextMapPropagator = {
  inject: (context, carrier, setter) => traceContext.inject(context, carrier, setter),
  extract: (context, carrier, getter) => withoutTraceState(traceContext.extract(context, carrier, getter)),
  fields: () => traceContext.fields(),
};

function withoutTraceState(context: Context): Context {
  const parent = trace.getSpanContext(context);
  if (parent?.traceState === undefined) return context;
  return trace.setSpanContext(context, { ...parent, traceState: undefined });
}

/** The propagators `OTEL_PROPAGATORS` may name. `none` adds none; alone, nothing is read or sent. */
const PROPAGATORS: Readonly<Record<string, TextMapPropagator | undefined>> = {
  tracecontext: callerTraceContext,
  baggage: new W3CBaggagePropagator(),
  none: undefined,
};

/**
 * `tracecontext` when `OTEL_PROPAGATORS` is unset, unlike OpenTelemetry's default: a caller's `baggage` (up to 8 KB) goes on
 * only when the operator says so. A name the service lacks (`b3`) stops start-up rather than quietly propagating nothing.
 */
export function propagatorFor(environment: NodeJS.ProcessEnv): TextMapPropagator {
  const names = (environment.OTEL_PROPAGATORS ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  const known = Object.keys(PROPAGATORS);
  const unknown = names.find((name) => !known.includes(name));
  if (unknown !== undefined) throw new ConfigError(`environment variable OTEL_PROPAGATORS: ${JSON.stringify(unknown)} is not one of ${known.join(', ')}`);
  const chosen = (names.length === 0 ? ['tracecontext'] : names).flatMap((name) => PROPAGATORS[name] ?? []);
  return new CompositePropagator({ propagators: [...new Set(chosen)] });
}
