/** The part of autocannon 9's programmatic API the benchmarks use (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
      /** Called before every sending of this request; what it returns is sent instead. */
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request;
    }

    interface Options {
      url: string;
      connections?: number;
      pipelining?: number;
      /** Seconds. Ignored when `amount` is set. */
      duration?: number;
      /** Total requests to send, then stop. */
      amount?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      /** Sent in turn by every connection. */
      requests?: Request[];
      /** Seconds before a request counts as timed out. */
      timeout?: number;
      /** Milliseconds between samples; a run also ends only on a sample. */
      sampleInt?: number;
    }

    interface Histogram {
      average: number;
      mean: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p99: number;
    }

    interface Result {
      /** Seconds the run really lasted. */
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      /** Milliseconds. */
      latency: Histogram;
      /** Per-second samples; `total` counts completed requests. */
      requests: Histogram & { sent: number };
    }

    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void;
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;

  export = autocannon;
}
