import { DocumentQueryError } from './errors.ts';
import { jsonPathOf, type FieldPath } from './paths.ts';
import type { SqlFragment } from './types.ts';
import { isStorableText } from '../values/storable-text.ts';

/** Longer patterns are refused; the statement time limit bounds what a shorter one costs. */
export const MAX_PATTERN_LENGTH = 1000;

/** Matched by PostgreSQL in its own dialect (POSIX ARE, not JavaScript's); `[*]` takes each element of an array, as in MongoDB. */
export function regexMatches(path: FieldPath, pattern: unknown, options: unknown): SqlFragment {
  const { source, insensitive } = patternOf(pattern, options);
  return {
    sql: `exists (select from jsonb_path_query(doc, ?::jsonpath) as found where jsonb_typeof(found) = 'string' and found #>> '{}' ${insensitive ? '~*' : '~'} ?)`,
    bindings: [`${jsonPathOf(path)}[*]`, source],
  };
}

function patternOf(pattern: unknown, options: unknown): { source: string; insensitive: boolean } {
  if (options !== undefined && typeof options !== 'string') throw new DocumentQueryError('$options needs a string of flags');
  let source: string;
  let flags = options ?? '';
  if (pattern instanceof RegExp) {
    if (pattern.flags !== '' && options !== undefined) throw new DocumentQueryError('$regex: give the flags either in the RegExp or in $options, not both');
    source = pattern.source;
    flags = pattern.flags || flags;
  } else if (typeof pattern === 'string') source = pattern;
  else throw new DocumentQueryError('$regex needs a string or a RegExp');
  const unsupported = [...flags].find((flag) => flag !== 'i');
  if (unsupported !== undefined) throw new DocumentQueryError(`$regex: unsupported flag "${unsupported}" (only "i" is supported)`);
  if (source.length > MAX_PATTERN_LENGTH) throw new DocumentQueryError(`$regex: a pattern may be at most ${MAX_PATTERN_LENGTH} characters, this one has ${source.length}`);
  if (!isStorableText(source)) throw new DocumentQueryError('$regex: a pattern with NUL (\\u0000) or an unpaired surrogate cannot be matched');
  return { source, insensitive: flags.includes('i') };
}
