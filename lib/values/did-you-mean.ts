/**
 * One problem per property of `candidate` not in `known`, with the known one it is a letter or a
 * case away from, if any: `unknown property "skipauth" (did you mean "skipAuth"?)`.
 */
export function unknownPropertyProblems(candidate: Record<string, unknown>, known: readonly string[], prefix: string): string[] {
  return Object.keys(candidate)
    .filter((key) => !known.includes(key))
    .map((key) => {
      const near = known.find((name) => name.toLowerCase() === key.toLowerCase() || editDistance(name, key) === 1);
      return `unknown property "${prefix}${key}"${near === undefined ? '' : ` (did you mean "${near}"?)`}`;
    });
}

/** Levenshtein distance: the fewest insertions, deletions and substitutions from one word to the other. */
function editDistance(from: string, to: string): number {
  let previous = Array.from({ length: to.length + 1 }, (_, index) => index);
  for (let row = 1; row <= from.length; row++) {
    const current = [row];
    for (let column = 1; column <= to.length; column++) {
      const substitution = previous[column - 1] + (from[row - 1] === to[column - 1] ? 0 : 1);
      current.push(Math.min(previous[column] + 1, current[column - 1] + 1, substitution));
    }
    previous = current;
  }
  return previous[to.length];
}
