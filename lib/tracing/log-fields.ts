import { trace } from '@opentelemetry/api';

/** A new object each time: pino's mixin merges the line's own fields into it. */
export function activeTraceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (span === undefined) return {};
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}
