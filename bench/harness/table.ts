import type { Row, Section } from './results.ts';

const MEASUREMENT_HEADINGS = ['measurement', 'server', 'req/s', 'p99 ms', 'CPU µs/req', 'DB CPU µs/req', 'req/s ratio', 'p99 ratio', 'CPU ratio', 'notes'] as const;
const VERDICT_HEADINGS = ['measurement', 'target (issues 13, 38)', 'this run', 'by CPU', 'verdict'] as const;

/**
 * The results as plain text: one table of every measurement, then one line per target of
 * issue 13 and how many this run met. A ratio compares the section's first row with the row it
 * stands on (first ÷ this): a req/s ratio of 0.40 means the subject serves 40 % of that row's
 * throughput, a p99 ratio of 2.00 that its slowest 1 % take twice as long. The CPU ratio is
 * this row's CPU per request ÷ the first row's: the req/s ratio the subject would reach if each
 * server had a core to itself, the steadier figure when other work shares the machine.
 */
export function formatTable(sections: readonly Section[]): string {
  const measurements = sections.flatMap((section) => section.rows.map((row, index) => rowCells(section, row, index)));
  const verdicts = sections.flatMap((section) =>
    section.verdicts.map((verdict, index) => [index === 0 ? section.title : '', verdict.target, verdict.actual, verdict.byCpu ?? '', verdict.outcome.toUpperCase()]),
  );
  const met = sections.flatMap((section) => section.verdicts).filter((verdict) => verdict.outcome === 'met').length;
  return [
    columns(MEASUREMENT_HEADINGS, measurements, new Set([2, 3, 4, 5, 6, 7, 8])),
    '',
    'req/s and p99 ratio = first row of the measurement ÷ this row; CPU ratio = this row ÷ first row (CPU time per request of the server process)',
    'DB CPU µs/req = the same for every PostgreSQL process on this machine (and PgBouncer in 6), where the measurement talks to a database here',
    '',
    columns(VERDICT_HEADINGS, verdicts, new Set([2, 3])),
    '',
    `targets met: ${met} of ${verdicts.length}`,
  ].join('\n');
}

/** Aligned columns under a heading and a rule; `rightAligned` holds the numeric columns. */
function columns(headings: readonly string[], cells: readonly string[][], rightAligned: ReadonlySet<number>): string {
  const widths = headings.map((heading, column) => Math.max(heading.length, ...cells.map((line) => (line[column] ?? '').length)));
  const render = (line: readonly string[]) =>
    line.map((cell, column) => (rightAligned.has(column) ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0))).join('  ').trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [render(headings), rule, ...cells.map(render)].join('\n');
}

function rowCells(section: Section, row: Row, index: number): string[] {
  const subject = section.rows[0]?.measurement;
  const { measurement } = row;
  const compared = index > 0 && subject !== undefined;
  const notes = [row.note, measurement.failures > 0 ? `${measurement.failures} failed answers: figure not valid` : undefined];
  const cpu = measurement.cpuMicrosecondsPerRequest;
  const databaseCpu = measurement.databaseCpuMicrosecondsPerRequest;
  const subjectCpu = subject?.cpuMicrosecondsPerRequest;
  return [
    index === 0 ? section.title : '',
    row.server,
    formatNumber(measurement.requestsPerSecond, 0),
    formatNumber(measurement.p99, measurement.p99 < 1 ? 2 : measurement.p99 < 10 ? 1 : 0),
    cpu === undefined ? '' : formatNumber(cpu, 0),
    databaseCpu === undefined ? '' : formatNumber(databaseCpu, 0),
    compared ? ratio(subject.requestsPerSecond, measurement.requestsPerSecond) : '',
    compared ? ratio(subject.p99, measurement.p99) : '',
    compared && cpu !== undefined && subjectCpu !== undefined ? ratio(cpu, subjectCpu) : '',
    notes.filter(Boolean).join('; '),
  ];
}

function ratio(numerator: number, denominator: number): string {
  return denominator > 0 ? (numerator / denominator).toFixed(2) : 'n/a';
}

function formatNumber(value: number, decimals: number): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/** Bytes as mebibytes with one decimal, for the RSS notes. */
export function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
