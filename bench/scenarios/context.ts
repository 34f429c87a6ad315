import type { ServiceSetup } from '../harness/service.ts';
import type { BenchSettings } from '../harness/settings.ts';

/** What every measurement of one run can use. */
export interface BenchContext {
  readonly settings: BenchSettings;
  readonly setup: ServiceSetup;
  /** The projects folder of the main service: the sample and the benchmark fixture. */
  readonly projectsDir: string;
  /** Seeded account names that getOneAccount looks up in turn. */
  readonly usernames: readonly string[];
  /** Starts of the score ranges item 7 requests in turn. */
  readonly rangeStarts: readonly number[];
  /** A progress line on stderr, so the table on stdout stays clean. */
  progress(line: string): void;
}
