import { setTimeout as sleep } from 'node:timers/promises';
import type { ProcessExit, ServiceProcess } from './service-process.ts';

/** One request of a load run and what came back; times in ms on `performance.now()`'s clock. */
export interface Exchange {
  readonly label: string;
  readonly startedAt: number;
  readonly endedAt: number;
  /** The answer's status, or undefined when no answer came (the error says why). */
  readonly status: number | undefined;
  readonly body: string;
  readonly headers: Headers | undefined;
  readonly error?: string;
}

/** What a worker sends next. */
export interface PlannedRequest {
  readonly label: string;
  readonly url: string;
  readonly init?: RequestInit;
}

export interface SteadyLoadOptions {
  /** Concurrent workers, each one request at a time on keep-alive connections. */
  workers: number;
  /** A worker starts at most one request per this many ms. */
  paceMs: number;
  /** A request with no answer after this long is recorded as failed. */
  giveUpMs?: number;
  next(worker: number, sequence: number): PlannedRequest;
}

export interface SteadyLoad {
  /** Every exchange finished so far. */
  readonly exchanges: readonly Exchange[];
  /** Stops sending, waits for the requests in flight, and returns every exchange. */
  stop(): Promise<Exchange[]>;
}

/** Sends requests from `workers` loops at a steady pace until stopped, recording each one. */
export function steadyLoad(options: SteadyLoadOptions): SteadyLoad {
  const exchanges: Exchange[] = [];
  let stopping = false;
  const loops = Array.from({ length: options.workers }, async (_, worker) => {
    for (let sequence = 0; !stopping; sequence++) {
      const started = performance.now();
      exchanges.push(await sendRequest(options.next(worker, sequence), options.giveUpMs));
      const rest = options.paceMs - (performance.now() - started);
      if (rest > 0 && !stopping) await sleep(rest);
    }
  });
  return {
    exchanges,
    stop: async () => {
      stopping = true;
      await Promise.all(loops);
      return exchanges;
    },
  };
}

/** Sends one request and records what came back, or that nothing did within `giveUpMs`. */
export async function sendRequest(request: PlannedRequest, giveUpMs = 10_000): Promise<Exchange> {
  const startedAt = performance.now();
  try {
    const response = await fetch(request.url, { ...request.init, signal: AbortSignal.timeout(giveUpMs) });
    const body = await response.text();
    return { label: request.label, startedAt, endedAt: performance.now(), status: response.status, body, headers: response.headers };
  } catch (error) {
    const reason = error instanceof Error ? `${error.message}${error.cause instanceof Error ? `: ${error.cause.message}` : ''}` : String(error);
    return { label: request.label, startedAt, endedAt: performance.now(), status: undefined, body: '', headers: undefined, error: reason };
  }
}

/** What stopping an instance under load gave. */
export interface StopUnderLoad {
  /** Every exchange of the load. */
  readonly exchanges: Exchange[];
  /** When SIGTERM was sent, on `performance.now()`'s clock. */
  readonly signalled: number;
  readonly exit: ProcessExit;
  /** Milliseconds from SIGTERM to the exit. */
  readonly exitMs: number;
}

/**
 * Lets `load` run for `beforeMs`, sends SIGTERM to `instance` and waits for it to exit, lets the
 * load run `afterMs` more, then stops it.
 */
export async function stopUnderLoad(load: SteadyLoad, instance: ServiceProcess, beforeMs: number, afterMs: number): Promise<StopUnderLoad> {
  await sleep(beforeMs);
  const signalled = performance.now();
  instance.signal('SIGTERM');
  const exit = await instance.exited;
  const exitMs = performance.now() - signalled;
  await sleep(afterMs);
  return { exchanges: await load.stop(), signalled, exit, exitMs };
}

/** Milliseconds an exchange took. */
export function durationOf(exchange: Exchange): number {
  return exchange.endedAt - exchange.startedAt;
}

/** A short line for a failure message. */
export function describeExchange(exchange: Exchange, origin = 0): string {
  const when = `${Math.round(exchange.startedAt - origin)}..${Math.round(exchange.endedAt - origin)} ms`;
  return `${exchange.label} ${when}: ${exchange.status ?? exchange.error} ${exchange.body.slice(0, 120)}`;
}
