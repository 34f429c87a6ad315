import { isDeepStrictEqual } from 'node:util';
import { DocumentQueryError } from './errors.ts';
import { parsePath, setAt, unsetAt, type FieldPath } from './paths.ts';
import type { Document } from './types.ts';
import { isPlainObject, type Json } from '../values/json.ts';
import { toStorableValue } from './values.ts';

interface CompiledUpdate {
  sets: Array<{ path: FieldPath; value: Json }>;
  unsets: FieldPath[];
}

/** Checks an update (`$set` and `$unset` only) once, before any row is touched. */
export function compileUpdate(update: unknown): CompiledUpdate {
  if (!isPlainObject(update)) throw new DocumentQueryError('an update must be a plain object');
  const compiled: CompiledUpdate = { sets: [], unsets: [] };
  for (const [operator, fields] of Object.entries(update)) {
    if (operator !== '$set' && operator !== '$unset') {
      const kind = operator.startsWith('$') ? `unknown update operator "${operator}"` : `"${operator}" is not an update operator (use $set)`;
      throw new DocumentQueryError(kind);
    }
    if (!isPlainObject(fields)) throw new DocumentQueryError(`${operator} needs an object of fields`);
    for (const [name, value] of Object.entries(fields)) {
      const path = parsePath(name, operator);
      if (operator === '$set') compiled.sets.push({ path, value: toStorableValue(value, `$set "${name}"`) });
      else compiled.unsets.push(path);
    }
  }
  if (compiled.sets.length + compiled.unsets.length === 0) throw new DocumentQueryError('an update needs $set or $unset with at least one field');
  rejectConflicts(compiled);
  return compiled;
}

/** Two operations on one path, or on a path and its parent, have no defined order. */
function rejectConflicts({ sets, unsets }: CompiledUpdate): void {
  const paths = [...sets.map((set) => set.path), ...unsets].map((path) => path.join('.'));
  for (const [index, path] of paths.entries()) {
    const clash = paths.find((other, otherIndex) => otherIndex !== index && (other === path || other.startsWith(`${path}.`)));
    if (clash !== undefined) throw new DocumentQueryError(`update paths "${path}" and "${clash}" conflict`);
  }
}

/** The document after the update; `_id` cannot change. */
export function applyUpdate(document: Document, { sets, unsets }: CompiledUpdate): Document {
  const updated = structuredClone(document);
  for (const { path, value } of sets) {
    if (path[0] === '_id') {
      if (path.length === 1 && value === document._id) continue;
      throw new DocumentQueryError('_id cannot be changed');
    }
    setAt(updated, path, value);
  }
  for (const path of unsets) {
    if (path[0] === '_id') throw new DocumentQueryError('_id cannot be removed');
    unsetAt(updated, path);
  }
  return updated;
}

export function documentChanged(before: Document, after: Document): boolean {
  return !isDeepStrictEqual(before, after);
}
