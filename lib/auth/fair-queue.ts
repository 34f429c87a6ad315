interface Waiting {
  readonly job: () => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (reason: unknown) => void;
}

/**
 * Jobs run `concurrency` at a time, at most `capacity` waiting, shared fairly between keys (tenants): the keys
 * with jobs waiting take turns, one job each, and a full queue makes room for a key by refusing the newest job of
 * the key that waits with the most, so one key's burst can fill the queue only while no other key needs it.
 */
export class FairQueue {
  readonly #concurrency: number;
  readonly #capacity: number;
  readonly #refusal: () => Error;
  /** Each key's waiting jobs, oldest first; the Map's order is the order of turns. */
  readonly #waiting = new Map<string, Waiting[]>();
  #waitingCount = 0;
  #running = 0;

  constructor(options: { concurrency: number; capacity: number; refusal: () => Error }) {
    this.#concurrency = options.concurrency;
    this.#capacity = options.capacity;
    this.#refusal = options.refusal;
  }

  /** Throws the refusal when a job of `key` would get no place now. */
  assertRoomFor(key: string): void {
    if (this.#waitingCount >= this.#capacity && this.#crowding(key) === undefined) throw this.#refusal();
  }

  /** Runs `job` in `key`'s turn; rejects with the refusal when it gets no place, or loses it to another key. */
  run<Result>(key: string, job: () => Promise<Result>): Promise<Result> {
    if (this.#waitingCount >= this.#capacity && !this.#madeRoomFor(key)) return Promise.reject(this.#refusal());
    return new Promise<Result>((resolve, reject) => {
      const queue = this.#waiting.get(key) ?? [];
      queue.push({ job, resolve: resolve as (value: unknown) => void, reject });
      this.#waiting.set(key, queue);
      this.#waitingCount += 1;
      this.#startNext();
    });
  }

  /** The key waiting with two jobs or more beyond `key`'s, the one with the most. */
  #crowding(key: string): string | undefined {
    let most = (this.#waiting.get(key)?.length ?? 0) + 1;
    let crowding: string | undefined;
    for (const [other, queue] of this.#waiting) {
      if (queue.length > most) [most, crowding] = [queue.length, other];
    }
    return crowding;
  }

  /** Whether a job of another key was refused to make room for one of `key`. */
  #madeRoomFor(key: string): boolean {
    const crowding = this.#crowding(key);
    if (crowding === undefined) return false;
    const queue = this.#waiting.get(crowding) as Waiting[];
    (queue.pop() as Waiting).reject(this.#refusal());
    this.#waitingCount -= 1;
    return true;
  }

  #startNext(): void {
    while (this.#running < this.#concurrency) {
      const turn = this.#waiting.entries().next();
      if (turn.done === true) return;
      const [key, queue] = turn.value;
      const next = queue.shift() as Waiting;
      // The key goes to the back of the turns, or leaves them with nothing waiting.
      this.#waiting.delete(key);
      if (queue.length > 0) this.#waiting.set(key, queue);
      this.#waitingCount -= 1;
      this.#running += 1;
      void Promise.resolve()
        .then(next.job)
        .then(next.resolve, next.reject)
        .finally(() => {
          this.#running -= 1;
          this.#startNext();
        });
    }
  }
}
