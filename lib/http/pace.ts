/**
 * How fast bytes must move between the service and a client: within `graceMs`, plus a second per
 * `minBytesPerSecond` bytes moved (Apache's mod_reqtimeout rule). A bound on the whole transfer
 * would cut honest clients on slow links (10 MB over a 1 Mbit/s link takes 80 s); a bound on
 * silence alone would not end a byte moved every 2 s. Keeping the rate on average passes.
 */
export interface Pace {
  readonly graceMs: number;
  readonly minBytesPerSecond: number;
  /** How often the transfers under way are checked. */
  readonly checkMs: number;
}

/** Request bodies and answers alike: 10 s, then 1 KiB/s on average, checked each second. */
export const PACE: Pace = Object.freeze({ graceMs: 10_000, minBytesPerSecond: 1024, checkMs: 1000 });

/** When a transfer that started keeping `pace` at `since` falls behind it, `bytesSince` bytes having moved. */
export function paceDeadline(pace: Pace, since: number, bytesSince: number): number {
  return since + pace.graceMs + (bytesSince * 1000) / pace.minBytesPerSecond;
}

/**
 * Whether a transfer counted from `since` has earned more than the grace ahead of `now`: a request body's count then
 * starts over at `now`, so that the bytes sent first buy no stall after them (100 MB of upload at once earned 28 hours,
 * the files on disk). Not an answer's: the kernel takes an answer's bytes in bursts (a third of its send buffer, up to
 * 4 MB, at a time), which an honest reader slower than a burst in the grace would not pass.
 */
export function earnedBeyondGrace(pace: Pace, since: number, bytesSince: number, now: number): boolean {
  return paceDeadline(pace, since, bytesSince) - now > pace.graceMs;
}

/**
 * Of the time since the previous check, what the service's own event loop held beyond the check's interval, when it
 * held it for longer than an interval more (0 otherwise). Meanwhile nothing moved between the kernel and the service,
 * whatever the client did, and timers run before I/O is polled: the check that comes late sees the client as stalled
 * for as long as the loop was held. A transfer's allowance moves on by that much, and the check decides nothing.
 */
export function heldBeyondCheck(checkMs: number, previousCheck: number, now: number): number {
  const held = now - previousCheck - checkMs;
  return held > checkMs ? held : 0;
}
