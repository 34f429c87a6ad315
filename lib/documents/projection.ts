import { checkBound } from './bounds.ts';
import { DocumentQueryError } from './errors.ts';
import { parsePath, setAt, unsetAt, valueAt, type FieldPath } from './paths.ts';
import type { Document, ProjectionSpec } from './types.ts';
import { isPlainObject } from '../values/json.ts';

export type Projector = (document: Document) => Record<string, unknown>;

const ID_PATH = parsePath('_id', 'projection');

/** `{a: 1}` keeps `_id` and `a`, `{a: 0}` drops `a`; `_id` may be dropped from an inclusion; a mix is an error. */
export function compileProjection(spec: unknown): Projector | undefined {
  if (spec === undefined) return undefined;
  if (!isPlainObject(spec)) throw new DocumentQueryError('a projection must be a plain object');
  checkBound('projectionFields', Object.keys(spec).length, 'projection');
  const entries = Object.entries(spec as ProjectionSpec).map(([name, flag]) => ({ path: parsePath(name, 'projection'), keep: flagValue(name, flag) }));
  if (entries.length === 0) return undefined;
  const keepId = entries.find((entry) => entry.path.join('.') === '_id')?.keep ?? true;
  const fields = entries.filter((entry) => entry.path.join('.') !== '_id');
  const included = fields.filter((entry) => entry.keep).map((entry) => entry.path);
  if (included.length > 0 && included.length < fields.length) throw new DocumentQueryError('a projection cannot mix inclusion and exclusion');
  if (included.length > 0 || (fields.length === 0 && keepId)) return (document) => include(document, included, keepId);
  const excluded = fields.map((entry) => entry.path);
  return (document) => exclude(document, keepId ? excluded : [...excluded, ID_PATH]);
}

function flagValue(name: string, flag: unknown): boolean {
  if (flag === 1 || flag === true) return true;
  if (flag === 0 || flag === false) return false;
  const operator = isPlainObject(flag) ? Object.keys(flag).find((key) => key.startsWith('$')) : undefined;
  if (operator !== undefined) throw new DocumentQueryError(`projection of "${name}": unknown operator "${operator}" (a projection takes 1 or 0)`);
  throw new DocumentQueryError(`projection of "${name}" must be 1 or 0`);
}

function include(document: Document, paths: FieldPath[], keepId: boolean): Record<string, unknown> {
  const result: Record<string, unknown> = keepId ? { _id: document._id } : {};
  for (const path of paths) {
    const value = valueAt(document, path);
    if (value !== undefined) setAt(result, path, value);
  }
  return result;
}

function exclude(document: Document, paths: FieldPath[]): Record<string, unknown> {
  const result = structuredClone(document) as Record<string, unknown>;
  for (const path of paths) unsetAt(result, path);
  return result;
}
