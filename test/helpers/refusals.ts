/** A field a declared schema refuses, as the 400 lists it. */
export interface FieldProblem {
  path: string;
  message: string;
}

/**
 * The body of a declared schema's 400 from its problems written `path: message` (`body.name:
 * is required`): `error` the first, `errors` them all, in order.
 */
export function schemaRefusal(...problems: string[]): { error: string; errors: FieldProblem[] } {
  const errors = problems.map((problem) => {
    const at = problem.indexOf(': ');
    return { path: problem.slice(0, at), message: problem.slice(at + 2) };
  });
  return { error: problems[0] ?? '', errors };
}

/** The 400 body for `error`: a schema's refusal (naming `body`, `query` or `params` first) or the plain `{error}` of anything else. */
export function refusalOf(error: string): { error: string; errors?: FieldProblem[] } {
  return /^(body|query|params)[.[:]/.test(error) ? schemaRefusal(error) : { error };
}
