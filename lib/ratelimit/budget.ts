/** A rate limit's name and budget: `max` requests per key in each window of `windowMs`. */
export interface RateLimitBudget {
  readonly name: string;
  readonly windowMs: number;
  readonly max: number;
}

/** `consumed`: the request itself included. */
export interface Spent {
  readonly consumed: number;
  readonly msBeforeReset: number;
}

/** Counts a request against its key's budget: at once in memory, through Redis when shared. */
export type RateCounter = (key: string) => Spent | Promise<Spent>;

/** The rate limits' counters (`lib/ratelimit`): limits of the same name and budget share one. */
export interface RateCounters {
  counterFor(budget: RateLimitBudget): RateCounter;
}

declare module '../core/runtime.ts' {
  interface Runtime {
    readonly rateCounters: RateCounters;
  }
}
