import createError from 'http-errors';
import { z } from 'zod';

const NAME_MAX_CODE_POINTS = 64;
const SCHEMA_MAX_CODE_POINTS = 128;
const SCHEMAS_MAX_COUNT = 1000;

/**
 * Letters (any script, with their combining marks, since names are kept as sent and a
 * decomposed "é" must stay usable), digits, space, `_`, `.`, `-`; a letter or digit first.
 */
const NAME_PATTERN = /^[\p{L}\p{Nd}][\p{L}\p{M}\p{Nd} _.-]*$/u;

/** PostgreSQL text cannot hold NUL or a lone surrogate: refused here rather than failing as a 500. */
const LONE_SURROGATE = /\p{Cs}/u;
const isStorable = (value: string): boolean => !value.includes('\u0000') && !LONE_SURROGATE.test(value);

const codePoints = (value: string): number => [...value].length;

/** True when `value` could be the name of a space (SPEC §6.1). */
export function isSpaceName(value: string): boolean {
  return codePoints(value) <= NAME_MAX_CODE_POINTS && NAME_PATTERN.test(value);
}

const requiredString = z.string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') });

const spaceName = requiredString
  .refine((value) => codePoints(value) >= 1 && codePoints(value) <= NAME_MAX_CODE_POINTS, `must be 1 to ${NAME_MAX_CODE_POINTS} characters`)
  .refine((value) => NAME_PATTERN.test(value), 'may hold only letters, digits, space, "_", "." and "-", and must start with a letter or digit');

const schemaName = z
  .string({ error: 'must be a string' })
  .refine((value) => value.length > 0, 'must not be empty')
  .refine((value) => codePoints(value) <= SCHEMA_MAX_CODE_POINTS, `must be at most ${SCHEMA_MAX_CODE_POINTS} characters`)
  .refine(isStorable, 'must not contain NUL or unpaired surrogates');

const schemaList = z
  .array(schemaName, { error: (issue) => (issue.input === undefined ? 'is required' : 'must be an array of strings') })
  .max(SCHEMAS_MAX_COUNT, `must have at most ${SCHEMAS_MAX_COUNT} entries`)
  .superRefine((schemas, context) => {
    const seen = new Set<string>();
    schemas.forEach((schema, index) => {
      if (seen.has(schema)) context.addIssue({ code: 'custom', path: [index], message: `repeats "${schema}"` });
      seen.add(schema);
    });
  });

const bodyObject = <Shape extends z.ZodRawShape>(shape: Shape) =>
  z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? unknownFieldsMessage(issue.keys) : 'request body must be a JSON object',
  });

function unknownFieldsMessage(keys: readonly string[]): string {
  return `unknown field${keys.length === 1 ? '' : 's'}: ${keys.join(', ')}`;
}

const createBody = bodyObject({ name: spaceName, schemas: schemaList.optional() });
const replaceBody = bodyObject({ name: requiredString.optional(), schemas: schemaList });

export interface SpaceDraft {
  readonly name: string;
  readonly schemas: readonly string[];
}

/** The body of `POST /spaces`; throws 400 naming the field at fault. */
export function parseCreateBody(body: unknown): SpaceDraft {
  const { name, schemas = [] } = parseOrThrow(createBody, body);
  return { name, schemas };
}

/** The body of `PUT /spaces/:name`: the new schema list; the body may repeat the name, not change it. */
export function parseReplaceBody(body: unknown, pathName: string): readonly string[] {
  const { name, schemas } = parseOrThrow(replaceBody, body);
  if (name !== undefined && name !== pathName) throw createError(400, 'name cannot be changed (spaces are not renamed)');
  return schemas;
}

function parseOrThrow<Output>(schema: z.ZodType<Output>, body: unknown): Output {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  throw createError(400, describeIssue(result.error.issues[0]));
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const field = fieldName(issue.path);
  return field === '' ? issue.message : `${field} ${issue.message}`;
}

/** `["schemas", 3]` → `schemas[3]`. */
function fieldName(path: readonly PropertyKey[]): string {
  return path.map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`)).join('');
}
