import { Writable } from 'node:stream';

/** One log line of the service, parsed. */
export type LogEntry = Readonly<Record<string, unknown>>;

export interface CollectedLogs {
  readonly destination: Writable;
  /** Every line so far, parsed. */
  entries(): LogEntry[];
  /** Every line so far, as written: for tests that look for what must not be there. */
  text(): string;
}

/** A log destination that keeps the service's lines in memory. */
export function collectLogs(): CollectedLogs {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { destination, entries: () => lines.map((line) => JSON.parse(line) as LogEntry), text: () => lines.join('\n') };
}
