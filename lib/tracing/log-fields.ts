import { trace } from '@opentelemetry/api';

/**
 * The active span's ids, for a log line to name its trace by: none outside a span. A new
 * object each time: pino's mixin merges the line's own fields into it.
 */
export function activeTraceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (span === undefined) return {};
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}
