import type { Measurement } from './load.ts';

/** One server or variant measured within a section. */
export interface Row {
  readonly server: string;
  readonly measurement: Measurement;
  readonly note?: string;
}

/** Whether a figure reached its target; 'not valid' when a measurement behind it had failed answers. */
export type Outcome = 'met' | 'missed' | 'not valid';

/** One target of issue 13, judged on this run's figures. */
export interface Verdict {
  /** What is aimed at, `req/s ≥ 1.00 × bare Koa + same middleware`. */
  readonly target: string;
  /** What this run measured, `0.52 ×`. */
  readonly actual: string;
  /** For a throughput target, the same ratio from CPU time per request, `0.59 ×`, when both rows have one. */
  readonly byCpu?: string;
  readonly outcome: Outcome;
}

/** A SPEC §14 item: its first row is the subject, the others what it is compared with. */
export interface Section {
  readonly title: string;
  readonly rows: readonly Row[];
  readonly verdicts: readonly Verdict[];
}

/**
 * One row for several processes of the same server, measured alike: the median process by req/s,
 * the spread of all in the note. Two processes of the same code, started alike, differ by up to a
 * tenth in CPU time per request (where V8 happens to lay out their code and heap), so that one
 * process's luck would decide a target within that.
 */
export function medianProcessRow(server: string, runs: readonly Measurement[], note?: string): Row {
  const sorted = [...runs].sort((one, other) => one.requestsPerSecond - other.requestsPerSecond);
  const median = sorted[Math.floor((sorted.length - 1) / 2)];
  if (median === undefined) throw new Error(`${server}: no measurement`);
  if (runs.length === 1) return { server, measurement: median, ...(note === undefined ? {} : { note }) };
  const cpu = runs.flatMap((run) => (run.cpuMicrosecondsPerRequest === undefined ? [] : [Math.round(run.cpuMicrosecondsPerRequest)]));
  const spread = `median of ${runs.length} processes (${Math.round(sorted[0]?.requestsPerSecond ?? 0).toLocaleString('en-US')}-${Math.round(sorted.at(-1)?.requestsPerSecond ?? 0).toLocaleString('en-US')} req/s${cpu.length === runs.length ? `, ${Math.min(...cpu)}-${Math.max(...cpu)} CPU µs/req` : ''})`;
  return { server, measurement: median, note: note === undefined ? spread : `${note}; ${spread}` };
}
