import { DocumentQueryError } from './errors.ts';
import { isPlainObject } from '../values/json.ts';

/**
 * The options a method was given, checked against those it knows: an option the store does not
 * implement is an error naming it, never silently ignored (an ignored `{upsert: true}` would
 * lose a write without a word).
 */
export function checkedOptions<Options extends object>(method: string, options: unknown, known: readonly (keyof Options & string)[]): Partial<Options> {
  if (options === undefined || options === null) return {};
  if (!isPlainObject(options)) throw new DocumentQueryError(`${method}: options must be a plain object`);
  const unknown = Object.keys(options).find((name) => !known.includes(name as keyof Options & string));
  if (unknown !== undefined) {
    const accepted = known.length === 0 ? 'it takes none' : `it takes ${known.join(', ')}`;
    throw new DocumentQueryError(`${method}: unknown option "${unknown}" (${accepted})`);
  }
  return options as Partial<Options>;
}

/** A boolean option: `true`, `false` or absent; anything else names the option. */
export function booleanOption(method: string, name: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new DocumentQueryError(`${method}: option "${name}" must be true or false`);
  return value;
}
