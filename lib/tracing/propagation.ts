import { type Context, type TextMapPropagator, trace } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { ConfigError } from '../config/index.ts';

const traceContext = new W3CTraceContextPropagator();

/**
 * W3C trace context as the service takes it from its callers: the `traceparent` is continued,
 * the `tracestate` is dropped. A caller's entries are its vendors' business, up to 512 bytes of
 * them, which would otherwise go on verbatim to whatever service a project's route calls; the
 * trace goes on without them, and what the service's own tracing writes (nothing today) is all
 * an outgoing `tracestate` can hold.
 */
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
 * What the service reads from a request and writes on its outgoing calls, as the standard
 * `OTEL_PROPAGATORS` lists it: `tracecontext` when unset, so that a caller's `baggage` (its own
 * keys and values, up to 8 KB) reaches the services a route calls only when the operator says
 * so (`tracecontext,baggage`), unlike OpenTelemetry's default. A name the service lacks (`b3`,
 * `jaeger`) stops start-up rather than quietly propagating nothing.
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
