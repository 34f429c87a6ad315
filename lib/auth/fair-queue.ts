interface Waiting {
  readonly job: () => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (reason: unknown) => void;
  readonly keys: readonly string[];
  /** Arrival order: the newest of a crowding key is the one refused. */
  readonly arrival: number;
}

/**
 * Jobs run `concurrency` at a time, at most `capacity` waiting, shared fairly. A job names its keys, one for each
 * way its callers are told apart (a tenant, a client address). The first key takes turns: the keys with jobs waiting
 * run one job each in turn. Every key crowds: a full queue makes room for a job by refusing the newest job of the key
 * that waits with two or more beyond the job's own key, in the first way that has one. So one tenant's burst from
 * many addresses, or one address's burst over many tenants, fills the queue only while no one else needs it.
 */
export class FairQueue {
  readonly #concurrency: number;
  readonly #capacity: number;
  readonly #refusal: () => Error;
  /** The waiting jobs by their first key, oldest first; the Map's order is the order of turns. */
  readonly #turns = new Map<string, Waiting[]>();
  /** For each way of telling callers apart, the jobs waiting under each key. */
  readonly #counts: Array<Map<string, number>> = [];
  #waitingCount = 0;
  #running = 0;
  #arrivals = 0;

  constructor(options: { concurrency: number; capacity: number; refusal: () => Error }) {
    this.#concurrency = options.concurrency;
    this.#capacity = options.capacity;
    this.#refusal = options.refusal;
  }

  /** Throws the refusal when a job of `keys` would get no place now. */
  assertRoomFor(keys: readonly string[]): void {
    if (this.#waitingCount >= this.#capacity && this.#crowding(keys) === undefined) throw this.#refusal();
  }

  /** Runs `job` in the turn of its first key; rejects with the refusal when it gets no place, or loses it to another's. */
  run<Result>(keys: readonly string[], job: () => Promise<Result>): Promise<Result> {
    if (this.#waitingCount >= this.#capacity && !this.#madeRoomFor(keys)) return Promise.reject(this.#refusal());
    return new Promise<Result>((resolve, reject) => {
      const turn = keys[0] ?? '';
      const queue = this.#turns.get(turn) ?? [];
      queue.push({ job, resolve: resolve as (value: unknown) => void, reject, keys, arrival: this.#arrivals++ });
      this.#turns.set(turn, queue);
      this.#count(keys, 1);
      this.#startNext();
    });
  }

  /** The first way in which some key waits with two jobs or more beyond `keys`' own, and the key with the most. */
  #crowding(keys: readonly string[]): { way: number; key: string } | undefined {
    for (const [way, own] of keys.entries()) {
      const counts = this.#counts[way] ?? new Map<string, number>();
      let most = (counts.get(own) ?? 0) + 1;
      let crowding: string | undefined;
      for (const [key, count] of counts) {
        if (count > most) [most, crowding] = [count, key];
      }
      if (crowding !== undefined) return { way, key: crowding };
    }
    return undefined;
  }

  /** Whether the newest job of a crowding key was refused to make room for one of `keys`. */
  #madeRoomFor(keys: readonly string[]): boolean {
    const crowding = this.#crowding(keys);
    if (crowding === undefined) return false;
    let newest: { queue: Waiting[]; index: number; turn: string } | undefined;
    for (const [turn, queue] of this.#turns) {
      for (const [index, waiting] of queue.entries()) {
        const isNewer = newest === undefined || waiting.arrival > (newest.queue[newest.index] as Waiting).arrival;
        if (waiting.keys[crowding.way] === crowding.key && isNewer) newest = { queue, index, turn };
      }
    }
    if (newest === undefined) return false;
    const [refused] = newest.queue.splice(newest.index, 1) as [Waiting];
    if (newest.queue.length === 0) this.#turns.delete(newest.turn);
    this.#count(refused.keys, -1);
    refused.reject(this.#refusal());
    return true;
  }

  #count(keys: readonly string[], change: 1 | -1): void {
    this.#waitingCount += change;
    for (const [way, key] of keys.entries()) {
      const counts = this.#counts[way] ?? new Map<string, number>();
      this.#counts[way] = counts;
      const count = (counts.get(key) ?? 0) + change;
      if (count === 0) counts.delete(key);
      else counts.set(key, count);
    }
  }

  #startNext(): void {
    while (this.#running < this.#concurrency) {
      const turn = this.#turns.entries().next();
      if (turn.done === true) return;
      const [key, queue] = turn.value;
      const next = queue.shift() as Waiting;
      // The key goes to the back of the turns, or leaves them with nothing waiting.
      this.#turns.delete(key);
      if (queue.length > 0) this.#turns.set(key, queue);
      this.#count(next.keys, -1);
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
