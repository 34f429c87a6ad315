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
