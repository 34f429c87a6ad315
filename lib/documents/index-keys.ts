import { createHash } from 'node:crypto';
import { DocumentQueryError } from './errors.ts';
import { parsePath, type FieldPath } from './paths.ts';

/**
 * The SQL expressions of a declared index (SPEC §9.4, `api/indexes.js`), written from the
 * declaration alone: the one place a field path becomes SQL text instead of a bound value.
 *
 * Each declared path `p` gives three key columns over `v = doc #> '{p}'`, the value at the path
 * itself (no array unwinding):
 * - `rank`: MongoDB's order of types, as an unindexed sort has it (sort.ts): 1 missing or null,
 *   2 number, 3 string, 4 object, 5 array, 6 boolean;
 * - `text`: a string's text, compared by code point (`collate "C"`), null for other types;
 * - `json`: a number, object, array or boolean as jsonb (numbers compare by value), else null.
 * Ordered by (rank, text, json), documents come out in exactly the order of the unindexed sort.
 *
 * Under row-level security PostgreSQL uses an index only for conditions whose functions are all
 * leakproof: these expressions use `jsonb_typeof`, `#>`, `#>>` and jsonb comparisons, which raise
 * no error on any input, and which migration `..._declared_index_functions` marks leakproof
 * (a superuser's right; the service warns at start-up when they are not).
 */

/** A declared index, checked: the paths in order, each with its direction. */
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

/** The three key expressions of one declared path. */
export interface PathKeys {
  readonly rank: string;
  readonly text: string;
  readonly json: string;
  /** Whether an array can lie on the path before its end (a dotted path), which `#>` reads as missing. */
  readonly dotted: boolean;
}

/**
 * Keys a declared path may hold: they are written into SQL text, so they are held to letters,
 * digits, `_` and `-`, starting with a letter or `_`. A key of digits alone is refused because
 * `#>` reads it as an array position, where a filter reads it as a field name.
 */
const DECLARED_KEY = /^[A-Za-z_][A-Za-z0-9_-]{0,62}$/;

/**
 * The most keys a declared path holds. Migration `..._document_array_paths` records arrays only
 * along paths a declaration could name (its own copy of these two rules, as a migration never
 * changes): keys of this form, this deep at most.
 */
const MAX_DECLARED_DEPTH = 16;

/** The checked path of a declaration, or the error naming what is wrong with it. */
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

/** The rank of a scalar's type, as `rank` computes it. */
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

/** The names of a declaration's indexes: the one queries use, and the unique one when declared. */
export interface IndexNames {
  readonly query: string;
  readonly unique: string | undefined;
}

/**
 * The indexes' names, the same on every instance: readable where they fit, always ending in a
 * hash of everything that defines the declaration, so two declarations never share a name.
 */
export function indexNames(declaration: IndexDeclaration): IndexNames {
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

/**
 * `create index` for a declaration: (tenant, then each path's keys in its direction, then id, the
 * tie-break of every sort), on the collection's rows only. No `collection` column: PostgreSQL
 * drops the query's `collection = …` as implied by the predicate, and a column left without a
 * condition would stop the scan from seeking on the keys after it.
 * A unique declaration gets a second index, unique per tenant over each path's whole value
 * (`uniqueIndexStatement`); this one serves its queries.
 */
export function indexStatement(name: string, declaration: IndexDeclaration): string {
  const columns = declaration.fields.flatMap(({ path, direction }) => {
    const keys = pathKeys(path);
    const order = direction === 1 ? 'asc' : 'desc';
    return [`${keys.rank} ${order}`, `${keys.text} ${order}`, `${keys.json} ${order}`];
  });
  return `create index concurrently if not exists ${name} on documents (tenant, ${columns.join(', ')}, id) where collection = ${literal(declaration.collection)}`;
}

/**
 * Unique per tenant and collection: two documents conflict when every declared path holds equal
 * values (1 and 1.0 are equal, objects and arrays compare whole). A document missing a path, or
 * holding null there, is not constrained (NULLs are distinct), like MongoDB's sparse unique index.
 */
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
