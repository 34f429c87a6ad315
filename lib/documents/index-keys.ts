import { createHash } from 'node:crypto';
import { DocumentQueryError } from './errors.ts';
import { parsePath, type FieldPath } from './paths.ts';

/**
 * The SQL of a declared index (SPEC §9.4): the one place a field path becomes SQL text instead of a bound value. Each
 * path gives three keys over `doc #> '{p}'` (no array unwinding), ordered exactly as the unindexed sort (sort.ts):
 * - `rank`: MongoDB's order of types: 1 missing or null, 2 number, 3 string, 4 object, 5 array, 6 boolean;
 * - `text`: a string, by code point (`collate "C"`); `json`: a number, object, array or boolean as jsonb.
 * Under row-level security an index serves only leakproof functions: migration `..._declared_index_functions` marks these so.
 */

export interface IndexDeclaration {
  readonly project: string;
  readonly collection: string;
  readonly fields: readonly IndexField[];
  readonly unique: boolean;
}

export interface IndexField {
  readonly path: FieldPath;
  readonly direction: 1 | -1;
}

export interface PathKeys {
  readonly rank: string;
  readonly text: string;
  readonly json: string;
  /** Whether an array can lie on the path before its end (a dotted path), which `#>` reads as missing. */
  readonly dotted: boolean;
}

/** Written into SQL text; digits alone are refused because `#>` reads them as an array position. */
const DECLARED_KEY = /^[A-Za-z_][A-Za-z0-9_-]{0,62}$/;

/** Migration `..._document_array_paths` holds its own copy of these two rules (a migration never changes). */
const MAX_DECLARED_DEPTH = 16;

export function declaredPath(path: string): FieldPath {
  const parsed = parsePath(path, 'index');
  const wrong = parsed.find((key) => !DECLARED_KEY.test(key));
  if (wrong !== undefined) throw new DocumentQueryError(`index: the key "${wrong}" of "${path}" must start with a letter or "_", hold only letters, digits, "_" and "-", and be at most 63 characters long`);
  if (parsed.length > MAX_DECLARED_DEPTH) throw new DocumentQueryError(`index: "${path}" has ${parsed.length} keys; a declared path has at most ${MAX_DECLARED_DEPTH}`);
  return parsed;
}

/** The key expressions of `path`, checked again here: this text goes into SQL. */
export function pathKeys(path: FieldPath): PathKeys {
  const keys = declaredPath(path.join('.'));
  const at = `'{${keys.join(',')}}'`;
  const value = `doc #> ${at}`;
  return {
    rank: `(case jsonb_typeof(${value}) when 'number' then 2 when 'string' then 3 when 'object' then 4 when 'array' then 5 when 'boolean' then 6 else 1 end)`,
    text: `((case when jsonb_typeof(${value}) = 'string' then doc #>> ${at} end) collate "C")`,
    json: `(case when jsonb_typeof(${value}) in ('number', 'object', 'array', 'boolean') then ${value} end)`,
    dotted: keys.length > 1,
  };
}

export function rankOf(value: string | number | boolean): number {
  if (typeof value === 'number') return 2;
  return typeof value === 'string' ? 3 : 6;
}

/** Ranks whose documents may still match a filter through an array: the index cannot tell, so they are rechecked. */
export function arrayRanks(keys: PathKeys): readonly number[] {
  return keys.dotted ? [1, 5] : [5];
}

/** Part of every index's name: a change to the key expressions changes it, so new indexes are built. */
const KEYS_VERSION = 2;

/** PostgreSQL's limit on identifiers. */
const MAX_NAME = 63;

/** The same on every instance, ending in a hash of the whole declaration so two never share a name. */
export function indexNames(declaration: IndexDeclaration): { readonly query: string; readonly unique: string | undefined } {
  const fields = declaration.fields.map(({ path, direction }) => `${path.join('.')}:${direction}`).join(',');
  const identity = JSON.stringify([KEYS_VERSION, declaration.project, declaration.collection, fields, declaration.unique]);
  const hash = createHash('sha256').update(identity).digest('hex').slice(0, 10);
  const readable = [declaration.project, declaration.collection, ...declaration.fields.map(({ path }) => path.join('_'))]
    .join('_')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_');
  const name = (prefix: string) => `${prefix}${readable.slice(0, MAX_NAME - prefix.length - hash.length - 1)}_${hash}`;
  return { query: name('doci_'), unique: declaration.unique ? name('docu_') : undefined };
}

/** No `collection` column: the predicate implies the query's condition, and a column without one would stop the seek on the keys after it. */
export function indexStatement(name: string, declaration: IndexDeclaration): string {
  const columns = declaration.fields.flatMap(({ path, direction }) => {
    const keys = pathKeys(path);
    const order = direction === 1 ? 'asc' : 'desc';
    return [`${keys.rank} ${order}`, `${keys.text} ${order}`, `${keys.json} ${order}`];
  });
  return `create index concurrently if not exists ${name} on documents (tenant, ${columns.join(', ')}, id) where collection = ${literal(declaration.collection)}`;
}

/** A missing or null path is not constrained (NULLs are distinct), like MongoDB's sparse unique index. */
export function uniqueIndexStatement(name: string, declaration: IndexDeclaration): string {
  const columns = declaration.fields.map(({ path }) => {
    const value = `doc #> '{${declaredPath(path.join('.')).join(',')}}'`;
    return `(case when jsonb_typeof(${value}) <> 'null' then ${value} end)`;
  });
  return `create unique index concurrently if not exists ${name} on documents (tenant, ${columns.join(', ')}) where collection = ${literal(declaration.collection)}`;
}

/** A collection name as a SQL string literal (DDL takes no bound values). */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
