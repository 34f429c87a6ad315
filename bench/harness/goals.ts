import type { Outcome, Row, Verdict } from './results.ts';

/**
 * The targets of issues 13 and 38, as verdicts on a run's rows. A figure taken from a measurement with
 * failed answers proves nothing either way, so its verdict is 'not valid'.
 */

/**
 * The subject serves at least `factor` × the other row's requests per second. The verdict is
 * on req/s, as issue 13 states it; `byCpu` gives the ratio the CPU time per request implies.
 */
export function throughputAtLeast(subject: Row, other: Row, factor: number): Verdict {
  const ratio = subject.measurement.requestsPerSecond / other.measurement.requestsPerSecond;
  const subjectCpu = subject.measurement.cpuMicrosecondsPerRequest;
  const otherCpu = other.measurement.cpuMicrosecondsPerRequest;
  return {
    target: `req/s ≥ ${factor.toFixed(2)} × ${other.server}`,
    actual: `${formatRatio(ratio)} ×`,
    ...(subjectCpu !== undefined && otherCpu !== undefined ? { byCpu: `${formatRatio(otherCpu / subjectCpu)} ×` } : {}),
    outcome: outcome(ratio >= factor, subject, other),
  };
}

/** The subject's p99 latency is at most `factor` × the other row's. */
export function p99AtMost(subject: Row, other: Row, factor: number): Verdict {
  const ratio = subject.measurement.p99 / other.measurement.p99;
  return {
    target: `p99 ≤ ${factor.toFixed(2)} × ${other.server}'s`,
    actual: `${formatRatio(ratio)} ×`,
    outcome: outcome(ratio <= factor, subject, other),
  };
}

/**
 * The subject's server process spends at most `factor` × the other row's CPU time per request
 * (the table's CPU µs/req). Not valid without both figures.
 */
export function cpuAtMost(subject: Row, other: Row, factor: number): Verdict {
  const subjectCpu = subject.measurement.cpuMicrosecondsPerRequest;
  const otherCpu = other.measurement.cpuMicrosecondsPerRequest;
  const target = `CPU per request ≤ ${factor.toFixed(2)} × ${other.server}'s`;
  if (subjectCpu === undefined || otherCpu === undefined) return { target, actual: 'no CPU figure', outcome: 'not valid' };
  const ratio = subjectCpu / otherCpu;
  return { target, actual: `${formatRatio(ratio)} ×`, outcome: outcome(ratio <= factor, subject, other) };
}

/** A figure of its own (a start-up time, a growth) stays under `limit`. */
export function figureBelow(what: string, value: number, limit: number, unit: string, source: Row): Verdict {
  const decimals = unit === '%' ? 1 : 0;
  return {
    target: `${what} < ${limit.toLocaleString('en-US')} ${unit}`,
    actual: `${value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals })} ${unit}`,
    outcome: outcome(value < limit, source),
  };
}

function outcome(met: boolean, ...sources: readonly Row[]): Outcome {
  if (sources.some((row) => row.measurement.failures > 0)) return 'not valid';
  return met ? 'met' : 'missed';
}

function formatRatio(ratio: number): string {
  return Number.isFinite(ratio) ? ratio.toFixed(2) : 'n/a';
}
