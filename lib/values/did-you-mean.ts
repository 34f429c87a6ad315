/** `unknown property "skipauth" (did you mean "skipAuth"?)` for each property not in `known`. */
export function unknownPropertyProblems(candidate: Record<string, unknown>, known: readonly string[], prefix: string): string[] {
  return Object.keys(candidate)
    .filter((key) => !known.includes(key))
    .map((key) => `unknown property "${prefix}${key}"${didYouMean(key, known)}`);
}

/** ` (did you mean "helpdesk"?)` when a known name is a letter, a swap of two letters or a case away from `word`; '' otherwise. */
export function didYouMean(word: string, known: readonly string[]): string {
  const near = known.find((name) => name.toLowerCase() === word.toLowerCase() || editDistance(name, word) === 1);
  return near === undefined ? '' : ` (did you mean "${near}"?)`;
}

/** Optimal string alignment: insertions, deletions, substitutions and swaps of neighbours (`helpdeks` is one from `helpdesk`). */
function editDistance(from: string, to: string): number {
  const rows: number[][] = [Array.from({ length: to.length + 1 }, (_, index) => index)];
  for (let row = 1; row <= from.length; row++) {
    const current = [row];
    for (let column = 1; column <= to.length; column++) {
      const substitution = rows[row - 1][column - 1] + (from[row - 1] === to[column - 1] ? 0 : 1);
      let best = Math.min(rows[row - 1][column] + 1, current[column - 1] + 1, substitution);
      if (row > 1 && column > 1 && from[row - 1] === to[column - 2] && from[row - 2] === to[column - 1]) best = Math.min(best, rows[row - 2][column - 2] + 1);
      current.push(best);
    }
    rows.push(current);
  }
  return rows[from.length][to.length];
}
