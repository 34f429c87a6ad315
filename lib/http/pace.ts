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
