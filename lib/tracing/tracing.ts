import type { Middleware } from 'koa';
import type { StatementTracer } from '../db/tenant-database.ts';

/** Traces (`lib/tracing`), started when the `OTEL_*` variables ask for them. */
export interface Tracing {
  traced(serve: Middleware): Middleware;
  readonly traceStatement: StatementTracer;
  logFields(): Record<string, string>;
  shutdown(): Promise<void>;
}

declare module '../core/runtime.ts' {
  interface Runtime {
    /** Undefined when traces are off: the request path then pays nothing for them. */
    readonly tracing?: Tracing;
  }
}
