import { checkBound } from './bounds.ts';
import { DocumentQueryError } from './errors.ts';
import { parsePath, type FieldPath } from './paths.ts';
import { isPlainObject, type Json } from '../values/json.ts';
import { toStorableValue } from './values.ts';

/** One step of an update as PostgreSQL applies it (`documents_apply_update`, migration `..._document_update_operators`). */
export interface UpdateOperation {
  readonly op: 'set' | 'unset' | 'inc' | 'push' | 'addToSet' | 'pull' | 'keepId';
  readonly path: FieldPath;
  readonly value?: Json;
}

export interface CompiledUpdate {
  readonly operations: readonly UpdateOperation[];
  /** `$set: {_id}`: the one `_id` an upsert's new document may take from the update. */
  readonly setsId: string | undefined;
}

type OperatorCompiler = (path: FieldPath, value: unknown, name: string) => UpdateOperation;

const OPERATORS: Readonly<Record<string, OperatorCompiler>> = {
  $set: (path, value, name) => ({ op: 'set', path, value: toStorableValue(value, `$set "${name}"`) }),
  $unset: (path) => ({ op: 'unset', path }),
  $inc: (path, value, name) => ({ op: 'inc', path, value: increment(value, name) }),
  $push: (path, value, name) => ({ op: 'push', path, value: listOperand('$push', value, name, '$each') }),
  $addToSet: (path, value, name) => ({ op: 'addToSet', path, value: listOperand('$addToSet', value, name, '$each') }),
  $pull: (path, value, name) => ({ op: 'pull', path, value: listOperand('$pull', value, name, '$in') }),
};

export const UPDATE_OPERATORS = Object.keys(OPERATORS);

/** Checks an update once, before any row is touched: unknown operators and bad operands are errors. */
export function compileUpdate(update: unknown): CompiledUpdate {
  if (!isPlainObject(update)) throw new DocumentQueryError('an update must be a plain object');
  checkBound('updateFields', Object.values(update).reduce<number>((count, fields) => count + (isPlainObject(fields) ? Object.keys(fields).length : 0), 0), 'update');
  const operations: UpdateOperation[] = [];
  let setsId: string | undefined;
  for (const [operator, fields] of Object.entries(update)) {
    const compile = Object.hasOwn(OPERATORS, operator) ? OPERATORS[operator] : undefined;
    if (compile === undefined) {
      const kind = operator.startsWith('$') ? `unknown update operator "${operator}" (known: ${UPDATE_OPERATORS.join(' ')})` : `"${operator}" is not an update operator (use $set)`;
      throw new DocumentQueryError(kind);
    }
    if (!isPlainObject(fields)) throw new DocumentQueryError(`${operator} needs an object of fields`);
    for (const [name, value] of Object.entries(fields)) {
      const operation = compile(parsePath(name, operator), value, name);
      if (operation.path[0] === '_id') {
        setsId = idOperation(operator, operation);
        operations.push({ op: 'keepId', path: operation.path, value: setsId });
      } else operations.push(operation);
    }
  }
  if (operations.length === 0) throw new DocumentQueryError(`an update needs an operator (${UPDATE_OPERATORS.join(' ')}) with at least one field`);
  rejectConflicts(operations);
  return { operations, setsId };
}

/** `_id` never changes: only `$set` of the value it already has is allowed (MongoDB's rule). */
function idOperation(operator: string, { op, path, value }: UpdateOperation): string {
  if (op === 'unset') throw new DocumentQueryError('_id cannot be removed');
  if (op !== 'set' || path.length !== 1 || typeof value !== 'string') throw new DocumentQueryError(`_id cannot be changed (by ${operator})`);
  return value;
}

function increment(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new DocumentQueryError(`$inc "${name}" needs a finite number, got ${describe(value)}`);
  return value;
}

/** `$push`/`$addToSet` take a value or `{$each: [values]}`, `$pull` a value or `{$in: [values]}`: the values as one JSON array. */
function listOperand(operator: string, value: unknown, name: string, listKey: '$each' | '$in'): Json {
  const where = `${operator} "${name}"`;
  const keys = dollarKeys(value);
  if (keys.length === 0) return [toStorableValue(value, where)];
  const unknown = keys.find((key) => key !== listKey);
  if (unknown !== undefined) {
    const why = listKey === '$each' ? `unknown modifier "${unknown}" (only $each is supported)` : `unknown operator "${unknown}" ($pull removes by equality, or $in)`;
    throw new DocumentQueryError(`${where}: ${why}`);
  }
  const list = (value as Record<string, unknown>)[listKey];
  if (Object.keys(value as object).length !== 1 || !Array.isArray(list)) throw new DocumentQueryError(`${where}: ${listKey} needs an array, and nothing beside it`);
  checkBound('eachValues', list.length, where);
  return toStorableValue(list, where);
}

function dollarKeys(value: unknown): string[] {
  return isPlainObject(value) ? Object.keys(value).filter((key) => key.startsWith('$')) : [];
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : typeof value === 'number' ? String(value) : typeof value;
}

/**
 * Two operations on one path, or on a path and its parent, have no defined order (MongoDB refuses them too). Found
 * among the paths in sorted order, each joined by NUL (which no key holds, and which sorts before every other
 * character): a path's descendants then follow it at once. Joining every prefix of every path instead took the
 * event loop 200 ms for the largest update the bounds allow (1 000 paths of 100 keys).
 */
function rejectConflicts(operations: readonly UpdateOperation[]): void {
  const joined = operations.map(({ path }) => path.join('\u0000')).sort();
  for (let index = 1; index < joined.length; index++) {
    const [parent, path] = [joined[index - 1] as string, joined[index] as string];
    if (path === parent || path.startsWith(`${parent}\u0000`)) {
      throw new DocumentQueryError(`update paths "${dotted(parent)}" and "${dotted(path)}" conflict`);
    }
  }
}

function dotted(joined: string): string {
  return joined.replaceAll('\u0000', '.');
}

export function operationsJson({ operations }: CompiledUpdate): string {
  return JSON.stringify(operations.map(({ op, path, value }) => ({ op, path, value: value ?? null })));
}
