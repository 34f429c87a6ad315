/** How one bridged handler ended: answered, handed on with `next()`, failed, or its client left first. */
export type Outcome =
  | { readonly kind: 'answered' }
  | { readonly kind: 'passed'; readonly to: PassedTo; readonly resume: Resume }
  | { readonly kind: 'failed'; readonly error: unknown }
  | { readonly kind: 'closed' };

/** Where `next` hands on: `next()` the chain, `next('route')` the next matching route, `next('router')` past all. */
export type PassedTo = 'chain' | 'route' | 'router';

/** Runs the rest of the chain in the async context `next` was called in (`AsyncLocalStorage.snapshot()`). */
export type Resume = <Result>(rest: () => Result) => Result;

/** Told about an attempt to end a handler that had already ended (`attempt` names the call). */
export type IgnoredAttempt = (attempt: string, first: Outcome | undefined, error?: unknown) => void;

/** The end of a bridged handler, not its function's return: the first outcome wins, later ones are reported. */
export class Completion {
  readonly #reportIgnored: IgnoredAttempt;
  #resolve: ((outcome: Outcome) => void) | undefined;
  #outcome: Promise<Outcome> | undefined;
  #settled: Outcome | undefined;

  constructor(reportIgnored: IgnoredAttempt) {
    this.#reportIgnored = reportIgnored;
  }

  /** How the handler ended, if it has: most answer before their function returns. */
  get settledOutcome(): Outcome | undefined {
    return this.#settled;
  }

  get settled(): boolean {
    return this.#settled !== undefined;
  }

  /** How the handler ends, once it does; made only for a handler still running when asked. */
  get outcome(): Promise<Outcome> {
    this.#outcome ??= this.#settled
      ? Promise.resolve(this.#settled)
      : new Promise((resolve) => {
          this.#resolve = resolve;
        });
    return this.#outcome;
  }

  settle(outcome: Outcome): boolean {
    if (this.#settled) return false;
    this.#settled = outcome;
    this.#resolve?.(outcome);
    return true;
  }

  /** As `settle`, but an attempt that comes too late is reported (a second answer, say). */
  settleOrReport(outcome: Outcome, attempt: string): boolean {
    if (this.settle(outcome)) return true;
    this.reportLate(attempt, outcome.kind === 'failed' ? outcome.error : undefined);
    return false;
  }

  /** Reports a call that came after the answer was given (`error`: what it failed with, if it did). */
  reportLate(attempt: string, error?: unknown): void {
    this.#reportIgnored(attempt, this.#settled, error);
  }
}

/** One request's bridged functions (custom auth, then handler) share a `res`: an answer ends the one running. */
export class Completions {
  #running: Completion | undefined;

  /** The completion of the function now running; none before the first starts. */
  get running(): Completion | undefined {
    return this.#running;
  }

  begin(reportIgnored: IgnoredAttempt): Completion {
    this.#running = new Completion(reportIgnored);
    return this.#running;
  }
}
