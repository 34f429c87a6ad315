import { z } from 'zod';
import { isStorableText } from '../values/storable-text.ts';

const NAME_MAX_CODE_POINTS = 64;
const SCHEMA_MAX_CODE_POINTS = 128;
const SCHEMAS_MAX_COUNT = 1000;

/** Combining marks too: names are kept as sent, and a decomposed "é" must stay usable. */
const NAME_PATTERN = /^[\p{L}\p{Nd}][\p{L}\p{M}\p{Nd} _.-]*$/u;

const codePoints = (value: string): number => [...value].length;

/** True when `value` could be the name of a space (SPEC §6.1). */
export function isSpaceName(value: string): boolean {
  return codePoints(value) <= NAME_MAX_CODE_POINTS && NAME_PATTERN.test(value);
}

const requiredString = z.string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') });

// Lengths count code points, which JSON Schema's minLength/maxLength count too: `.meta` shows
// in `/openapi.json` the limits the refinements (invisible there) check.
const spaceName = requiredString
  .refine((value) => codePoints(value) >= 1 && codePoints(value) <= NAME_MAX_CODE_POINTS, `must be 1 to ${NAME_MAX_CODE_POINTS} characters`)
  .refine((value) => NAME_PATTERN.test(value), 'may hold only letters, digits, space, "_", "." and "-", and must start with a letter or digit')
  .meta({
    minLength: 1,
    maxLength: NAME_MAX_CODE_POINTS,
    pattern: NAME_PATTERN.source,
    description: 'Letters (any script), digits, space, "_", "." and "-", starting with a letter or digit; compared exactly, without normalisation.',
  });

const schemaName = z
  .string({ error: 'must be a string' })
  .refine((value) => value.length > 0, 'must not be empty')
  .refine((value) => codePoints(value) <= SCHEMA_MAX_CODE_POINTS, `must be at most ${SCHEMA_MAX_CODE_POINTS} characters`)
  // PostgreSQL text cannot hold them: refused here rather than failing as a 500.
  .refine(isStorableText, 'must not contain NUL or unpaired surrogates')
  .meta({ minLength: 1, maxLength: SCHEMA_MAX_CODE_POINTS });

const schemaList = z
  .array(schemaName, { error: (issue) => (issue.input === undefined ? 'is required' : 'must be an array of strings') })
  .max(SCHEMAS_MAX_COUNT, `must have at most ${SCHEMAS_MAX_COUNT} entries`)
  .superRefine((schemas, context) => {
    const seen = new Set<string>();
    schemas.forEach((schema, index) => {
      if (seen.has(schema)) context.addIssue({ code: 'custom', path: [index], message: `repeats "${schema}"` });
      seen.add(schema);
    });
  })
  .meta({ uniqueItems: true });

const bodyObject = <Shape extends z.ZodRawShape>(shape: Shape) =>
  z.strictObject(shape, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? unknownFieldsMessage(issue.keys) : 'must be a JSON object'),
  });

function unknownFieldsMessage(keys: readonly string[]): string {
  return `unknown field${keys.length === 1 ? '' : 's'}: ${keys.join(', ')}`;
}

/** The body of `POST /spaces`. */
export const createSpaceBody = bodyObject({ name: spaceName, schemas: schemaList.optional() }).meta({ title: 'SpaceCreate' });

/** The body of `PUT /spaces/:name`: the new schema list; the body may repeat the name (the handler checks it is the same). */
export const replaceSpaceBody = bodyObject({
  name: requiredString.optional().meta({ description: 'May repeat the name in the URL; any other value is a 400 (no renames).' }),
  schemas: schemaList,
}).meta({ title: 'SpaceReplace' });

export type SpaceCreateBody = z.output<typeof createSpaceBody>;
export type SpaceReplaceBody = z.output<typeof replaceSpaceBody>;

const space = z.object({
  name: spaceName,
  schemas: schemaList.meta({ description: 'For a non-admin caller, only the schemas it may read.' }),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

/** The answer naming one space. */
export const spaceAnswer = z.object({ success: z.literal(true), data: space }).meta({ title: 'SpaceAnswer' });

const trashedSpace = space.extend({ deletedAt: z.iso.datetime().meta({ description: 'When the space was deleted; it is purged `spaces.trashDays` days later.' }) });

/** The answer listing the spaces the caller sees, or with `?trashed=true` the trashed ones. */
export const spaceList = z
  .object({ success: z.literal(true), data: z.union([z.array(space), z.array(trashedSpace)]), total: z.int().min(0) })
  .meta({ title: 'SpaceList' });

/** A space to create, as its body gave it. */
export interface SpaceDraft {
  readonly name: string;
  readonly schemas: readonly string[];
}

/**
 * A query string of these parameters and no other: a misspelt one (`?trashd=true`) is a 400 naming
 * it, never a silent answer to a question not asked.
 */
export function queryOf<Shape extends z.ZodRawShape>(shape: Shape) {
  return z.strictObject(shape, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown parameter${issue.keys.length === 1 ? '' : 's'}: ${issue.keys.join(', ')}` : 'must be a query string'),
  });
}

/** A parameter given twice (`?limit=5&limit=6`) is read as an array: it must be given once. */
export function givenOnceOr(message: string): (issue: { readonly input?: unknown }) => string {
  return (issue) => (Array.isArray(issue.input) ? 'must be given once' : message);
}

const HISTORY_LIMIT_MAX = 1000;
const HISTORY_LIMIT_DEFAULT = 100;

/** The query of `GET /spaces/:name/history`: a page size and where the page ends. */
export const historyQuery = queryOf({
  limit: z
    .string({ error: givenOnceOr(`must be an integer from 1 to ${HISTORY_LIMIT_MAX}`) })
    .regex(/^[1-9]\d{0,3}$/, `must be an integer from 1 to ${HISTORY_LIMIT_MAX}`)
    .refine((value) => Number(value) <= HISTORY_LIMIT_MAX, `must be an integer from 1 to ${HISTORY_LIMIT_MAX}`)
    .optional()
    .meta({ description: `Events per page, 1 to ${HISTORY_LIMIT_MAX} (default ${HISTORY_LIMIT_DEFAULT}).` }),
  before: z.iso
    .datetime({ error: givenOnceOr('must be an ISO 8601 UTC time') })
    // PostgreSQL has no year 0: zod's pattern accepts 0000, which would be a 500.
    .refine((value) => !value.startsWith('0000'), 'must be an ISO 8601 UTC time from year 1 on')
    .optional().meta({ description: 'Only events older than this `at` (the last one of the previous page).' }),
}).meta({ title: 'SpaceHistoryQuery' });

/** The page a checked history query asks for. */
export function historyPageOf(query: Record<string, unknown>): { limit: number; before?: Date } {
  const limit = typeof query.limit === 'string' ? Number(query.limit) : HISTORY_LIMIT_DEFAULT;
  return typeof query.before === 'string' ? { limit, before: wholeMillisecondsAfter(query.before) } : { limit };
}

/** A Date drops what is finer than a millisecond: `.6781` as `.678` would leave out the events of .678. */
function wholeMillisecondsAfter(time: string): Date {
  const date = new Date(time);
  const finer = /\.\d{3}(\d*)Z$/i.exec(time)?.[1] ?? '';
  return /[1-9]/.test(finer) ? new Date(date.getTime() + 1) : date;
}

const recordedSchemas = z.object({ schemas: z.array(z.string()) }).nullable();

/** Whose request id an event holds (SPEC §17.5), as the history and the audit show it. */
export const requestIdSource = z
  .enum(['caller', 'service'])
  .nullable()
  .meta({
    description:
      '`caller`: the `X-Request-Id` the caller sent (kept when 1 to 128 characters of `[A-Za-z0-9._:-]`); `service`: an id the service made. Null for a change made outside a request, and for events recorded before the service kept this.',
  });

const spaceEvent = z.object({
  action: z.enum(['created', 'updated', 'deleted', 'restored', 'purged']),
  at: z.iso.datetime(),
  actor: z.object({ uid: z.string(), username: z.string().nullable() }).nullable().meta({ description: 'Who made the change; null when no account did.' }),
  requestId: z.string(),
  requestIdFrom: requestIdSource,
  before: recordedSchemas,
  after: recordedSchemas,
});

/** The answer of `GET /spaces/:name/history`: a page of events, newest first, and the count of all. */
export const historyAnswer = z.object({ success: z.literal(true), data: z.array(spaceEvent), total: z.int().min(0) }).meta({ title: 'SpaceHistory' });

/** The query of `GET /spaces`: `?trashed=true` lists the trash instead (admins). */
export const listQuery = queryOf({
  trashed: z
    .enum(['true', 'false'], { error: givenOnceOr('must be "true" or "false"') })
    .optional()
    .meta({ description: '`true`: the spaces in the trash, with `deletedAt` (admins only; 403 for anyone else).' }),
}).meta({ title: 'SpaceListQuery' });

/** Whether a checked `GET /spaces` query asks for the trash. */
export function asksForTrash(query: Record<string, unknown>): boolean {
  return query.trashed === 'true';
}

