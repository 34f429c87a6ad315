import { declaredPath, indexNames, type IndexDeclaration, type IndexField } from '../documents/index-keys.ts';
import { isPlainObject } from '../values/json.ts';
import { kindOf } from '../values/kind-of.ts';
import { isStorableText } from '../values/storable-text.ts';
import { checkEntries, type CheckedEntry } from './entries.ts';
import type { RouteProblem } from './problems.ts';
import { unknownPropertyProblems } from '../values/did-you-mean.ts';

const KNOWN_PROPERTIES = ['collection', 'fields', 'unique'];
const MAX_COLLECTION_LENGTH = 128;
/** Each path takes three index columns; PostgreSQL allows 32, and tenant, collection and id take three. */
const MAX_FIELDS = 8;
/**
 * Every index on `documents` is read whenever any statement on it is planned, at a cost growing
 * with its key expressions: these bounds keep what one project's declarations add to another's
 * planning within 10 % of its time (test/documents/declared-planning.heavy.test.ts).
 */
export const MAX_PROJECT_INDEXES = 3;
export const MAX_PROJECT_PATHS = 6;

export interface ValidatedIndexes {
  readonly indexes: readonly IndexDeclaration[];
  readonly problems: readonly RouteProblem[];
}

/** Checks an index file's export (SPEC §9.4): `[{collection, fields: {path: 1 | -1}, unique?}]`. */
export function validateIndexes(project: string, file: string, exported: unknown): ValidatedIndexes {
  const { entries, problems } = checkEntries(project, file, exported, {
    plural: 'indexes',
    check: (candidate) => checkEntry(project, candidate),
    uniqueKeys: (declaration) => [[indexNames(declaration).query, (first) => `declares the same index as entry #${first}`]],
    problem: (candidate, index, reason) => ({ project, source: { file }, reason: `#${index}${collectionOf(candidate)}: ${reason}` }),
  });
  problems.push(...boundProblems(project, file, entries));
  return { indexes: problems.length === 0 ? entries : [], problems };
}

/** ` tickets`, how a problem names the entry's collection when it has one. */
function collectionOf(candidate: unknown): string {
  return isPlainObject(candidate) && typeof candidate.collection === 'string' && candidate.collection !== '' ? ` ${candidate.collection}` : '';
}

function boundProblems(project: string, file: string, indexes: readonly IndexDeclaration[]): RouteProblem[] {
  const reasons: string[] = [];
  const built = indexes.reduce((sum, { unique }) => sum + (unique ? 2 : 1), 0);
  if (built > MAX_PROJECT_INDEXES) reasons.push(`the entries build ${built} indexes (a unique entry builds two); a project's entries build at most ${MAX_PROJECT_INDEXES} (each one slows the planning of every statement on documents)`);
  const paths = indexes.reduce((sum, { fields }) => sum + fields.length, 0);
  if (paths > MAX_PROJECT_PATHS) reasons.push(`${paths} paths declared in all; a project declares at most ${MAX_PROJECT_PATHS} (each one slows the planning of every statement on documents)`);
  return reasons.map((reason) => ({ project, source: { file }, reason }));
}

function checkEntry(project: string, candidate: unknown): CheckedEntry<IndexDeclaration> {
  if (!isPlainObject(candidate)) return { reasons: [`an index must be an object {collection, fields} (got ${kindOf(candidate)})`] };
  const reasons = [...collectionProblems(candidate.collection), ...unknownPropertyProblems(candidate, KNOWN_PROPERTIES, '')];
  if (candidate.unique !== undefined && typeof candidate.unique !== 'boolean') reasons.push(`unique must be a boolean (got ${kindOf(candidate.unique)})`);
  const fields = readFields(candidate.fields, reasons);
  if (reasons.length > 0) return { reasons };
  const declaration = { project, collection: candidate.collection as string, fields, unique: candidate.unique === true };
  return { reasons, entry: Object.freeze(declaration) };
}

function collectionProblems(collection: unknown): string[] {
  if (collection === undefined) return ['collection is missing'];
  if (typeof collection !== 'string' || collection.length === 0 || collection.length > MAX_COLLECTION_LENGTH || !isStorableText(collection)) {
    return [`collection must be a collection name, a string of 1 to ${MAX_COLLECTION_LENGTH} characters (got ${kindOf(collection)})`];
  }
  return [];
}

/** `fields`: paths to 1 or -1, in order; each path checked as the store checks a path, and held to what SQL text may carry. */
function readFields(fields: unknown, reasons: string[]): IndexField[] {
  if (fields === undefined) {
    reasons.push('fields is missing');
    return [];
  }
  if (!isPlainObject(fields) || Object.keys(fields).length === 0 || Object.keys(fields).length > MAX_FIELDS) {
    reasons.push(`fields must be an object of 1 to ${MAX_FIELDS} paths, each 1 or -1, such as {createdAt: -1} (got ${kindOf(fields)})`);
    return [];
  }
  const read: IndexField[] = [];
  for (const [path, direction] of Object.entries(fields)) {
    try {
      const field = { path: declaredPath(path), direction: direction as 1 | -1 };
      if (direction === 1 || direction === -1) read.push(Object.freeze(field));
      else reasons.push(`fields.${path} must be 1 or -1 (got ${typeof direction === 'number' || typeof direction === 'string' ? JSON.stringify(direction) : kindOf(direction)})`);
    } catch (error) {
      reasons.push(`fields: ${(error as Error).message.replace(/^index: /, '')}`);
    }
  }
  return read;
}
