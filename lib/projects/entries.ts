import { kindOf } from '../values/kind-of.ts';
import type { RouteProblem } from './problems.ts';

/** One entry of a project module's array, checked alone: why it is wrong, else what it declares. */
export type CheckedEntry<Entry> = { reasons: string[]; entry?: Entry };

interface EntryRules<Entry> {
  /** What the array holds (`routes`, `indexes`), for the problem of an export that is no array. */
  readonly plural: string;
  check(candidate: unknown): CheckedEntry<Entry>;
  /** The keys no two entries may share, each with the problem of a later one (given the first's index). */
  uniqueKeys(entry: Entry): ReadonlyArray<readonly [key: string | undefined, sameAs: (first: number) => string]>;
  problem(candidate: unknown, index: number, reason: string): RouteProblem;
}

/**
 * Checks a project module's default export, an array of entries (routes, indexes): each entry
 * alone, then against the ones before it for the keys they may not share. Collects every problem.
 */
export function checkEntries<Entry>(project: string, file: string, exported: unknown, rules: EntryRules<Entry>): { entries: Entry[]; problems: RouteProblem[] } {
  if (!Array.isArray(exported)) {
    const reason = exported === undefined ? `has no default export (an array of ${rules.plural})` : `the default export must be an array of ${rules.plural} (got ${kindOf(exported)})`;
    return { entries: [], problems: [{ project, source: { file }, reason }] };
  }
  const entries: Entry[] = [];
  const problems: RouteProblem[] = [];
  const firsts = new Map<string, number>();
  exported.forEach((candidate: unknown, index) => {
    const { reasons, entry } = rules.check(candidate);
    if (entry !== undefined) {
      rules.uniqueKeys(entry).forEach(([key, sameAs], kind) => {
        if (key === undefined) return;
        const first = firsts.get(`${kind} ${key}`);
        if (first === undefined) firsts.set(`${kind} ${key}`, index);
        else reasons.push(sameAs(first));
      });
      entries.push(entry);
    }
    for (const reason of reasons) problems.push(rules.problem(candidate, index, reason));
  });
  return { entries, problems };
}
