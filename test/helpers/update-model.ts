import { isDeepStrictEqual } from 'node:util';

/**
 * The update operators as the guide describes them, written plainly in JavaScript over plain
 * objects: the oracle the statement PostgreSQL runs is compared with. Throws where the store
 * must refuse (a value of the wrong type, a path through a non-object).
 */
export function applyModelUpdate(document: Record<string, unknown>, update: Record<string, Record<string, unknown>>): Record<string, unknown> {
  const result = structuredClone(document);
  for (const [operator, fields] of Object.entries(update)) {
    for (const [name, operand] of Object.entries(fields)) apply(result, operator, name.split('.'), operand);
  }
  return result;
}

function apply(document: Record<string, unknown>, operator: string, path: string[], operand: unknown): void {
  if (operator === '$unset') {
    unsetAt(document, path);
    return;
  }
  const next = newValue(operator, valueAt(document, path), operand);
  if (next !== undefined) setAt(document, path, next);
}

/** The value the operator leaves at the path; undefined when it leaves the document alone. */
function newValue(operator: string, current: unknown, operand: unknown): unknown {
  switch (operator) {
    case '$set':
      return operand;
    case '$inc':
      if (current === undefined) return operand;
      if (typeof current !== 'number') throw new Error('not a number');
      return current + (operand as number);
    case '$push':
    case '$addToSet': {
      const list = arrayAt(current);
      for (const value of eachOf(operand)) if (operator === '$push' || !list.some((present) => isDeepStrictEqual(present, value))) list.push(value);
      return list;
    }
    case '$pull': {
      if (current === undefined) return undefined;
      const pulled = isPlainObject(operand) && '$in' in operand ? (operand.$in as unknown[]) : [operand];
      return arrayAt(current).filter((element) => !pulled.some((value) => isDeepStrictEqual(value, element)));
    }
    default:
      throw new Error(`no model for ${operator}`);
  }
}

function arrayAt(current: unknown): unknown[] {
  if (current === undefined) return [];
  if (!Array.isArray(current)) throw new Error('not an array');
  return [...current];
}

function eachOf(operand: unknown): unknown[] {
  return isPlainObject(operand) && '$each' in operand ? (operand.$each as unknown[]) : [operand];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function valueAt(document: Record<string, unknown>, path: string[]): unknown {
  let current: unknown = document;
  for (const key of path) {
    if (!isPlainObject(current)) return undefined;
    current = Object.hasOwn(current, key) ? current[key] : undefined;
  }
  return current;
}

function setAt(document: Record<string, unknown>, path: string[], value: unknown): void {
  let current = document;
  for (const key of path.slice(0, -1)) {
    if (!Object.hasOwn(current, key)) current[key] = {};
    const next = current[key];
    if (!isPlainObject(next)) throw new Error('not an object');
    current = next;
  }
  current[path[path.length - 1] as string] = value;
}

function unsetAt(document: Record<string, unknown>, path: string[]): void {
  const parent = valueAt(document, path.slice(0, -1));
  if (isPlainObject(parent)) delete parent[path[path.length - 1] as string];
}
