import type { Spent } from './budget.ts';

/** Fixed windows, one per key from its first request, as Redis counts them (`shared.ts`); without a promise, since nothing here waits. */
export class MemoryWindows {
  readonly #windowMs: number;
  readonly #windows = new Map<string, { consumed: number; resetAt: number }>();
  #sweepAt = 0;

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  consume(key: string): Spent {
    const now = Date.now();
    if (now >= this.#sweepAt) this.#sweep(now);
    let window = this.#windows.get(key);
    if (window === undefined || window.resetAt <= now) {
      window = { consumed: 0, resetAt: now + this.#windowMs };
      this.#windows.set(key, window);
    }
    window.consumed++;
    return { consumed: window.consumed, msBeforeReset: window.resetAt - now };
  }

  #sweep(now: number): void {
    for (const [key, window] of this.#windows) if (window.resetAt <= now) this.#windows.delete(key);
    this.#sweepAt = now + this.#windowMs;
  }
}
