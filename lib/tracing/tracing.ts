import type { Middleware } from 'koa';
import type { StatementTracer } from '../db/tenant-database.ts';

/** Traces (`lib/tracing`), started when the `OTEL_*` variables ask for them. */
export interface Tracing {
  /** `serve` with each request under a server span of its own, active while it is served. */
  traced(serve: Middleware): Middleware;
  /** Runs a statement under a span of its own, which holds its text and never its values. */
  readonly traceStatement: StatementTracer;
  /** `traceId` and `spanId` of the active span, for a log line; none outside a span. */
  logFields(): Record<string, string>;
  /** Exports the spans not yet sent, then stops. */
  shutdown(): Promise<void>;
}

declare module '../core/runtime.ts' {
  interface Runtime {
    /** Undefined when traces are off: the request path then pays nothing for them. */
    readonly tracing?: Tracing;
  }
}
