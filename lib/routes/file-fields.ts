import { isPlainObject, type JsonObject } from '../values/json.ts';
import type { Violation } from './schema-check.ts';

/** A property of a body schema declared as a file (`{type: "string", format: "binary"}`) or a list of files. */
interface FileField {
  readonly name: string;
  readonly required: boolean;
  readonly several: boolean;
  readonly minItems: number | undefined;
  readonly maxItems: number | undefined;
}

/** The file fields of a body schema, checked against the files of a multipart request rather than its other fields. */
export interface FileFields {
  readonly fields: readonly FileField[];
  /** `additionalProperties: false`: a file under a field the schema does not name is refused. */
  readonly closed: boolean;
}

/** The body schema's file fields, read from its top-level `properties`; undefined when it declares none. */
export function fileFieldsOf(body: JsonObject): FileFields | undefined {
  const { properties, required, additionalProperties } = body;
  if (!isPlainObject(properties)) return undefined;
  const requiredNames = Array.isArray(required) ? required : [];
  const fields: FileField[] = [];
  for (const [name, declared] of Object.entries(properties)) {
    if (!isPlainObject(declared)) continue;
    const several = declared.type === 'array' && isPlainObject(declared.items) && isFile(declared.items);
    if (!several && !isFile(declared)) continue;
    const minItems = several && typeof declared.minItems === 'number' ? declared.minItems : undefined;
    const maxItems = several && typeof declared.maxItems === 'number' ? declared.maxItems : undefined;
    fields.push({ name, required: requiredNames.includes(name), several, minItems, maxItems });
  }
  return fields.length === 0 ? undefined : { fields, closed: additionalProperties === false };
}

function isFile(schema: Readonly<Record<string, unknown>>): boolean {
  return schema.format === 'binary' && (schema.type === undefined || schema.type === 'string');
}

/** The body's violations with each file field checked against `files` (`req.files`) instead of the fields. */
export function withFilesChecked(declared: FileFields, bodyViolations: readonly Violation[], files: unknown): Violation[] {
  const names = new Set(declared.fields.map((field) => field.name));
  const kept = bodyViolations.filter((violation) => violation.path.length === 0 || !names.has(String(violation.path[0])));
  const received: Record<string, unknown> = isPlainObject(files) ? files : {};
  const fileViolations = declared.fields.flatMap((field) => fieldViolations(field, countOf(received[field.name])));
  const strangers = declared.closed ? Object.keys(received).filter((name) => !names.has(name)) : [];
  return [...kept, ...fileViolations, ...strangers.map((name) => ({ path: [name], message: 'is not allowed' }))];
}

function countOf(received: unknown): number {
  if (received === undefined || received === null) return 0;
  return Array.isArray(received) ? received.length : 1;
}

function fieldViolations(field: FileField, count: number): Violation[] {
  const at = (message: string) => [{ path: [field.name], message }];
  if (count === 0) return field.required ? at('is required (a file in a multipart body)') : [];
  if (!field.several) return count > 1 ? at(`must be one file (got ${count})`) : [];
  if (field.minItems !== undefined && count < field.minItems) return at(`must hold at least ${field.minItems} files (got ${count})`);
  if (field.maxItems !== undefined && count > field.maxItems) return at(`must hold at most ${field.maxItems} files (got ${count})`);
  return [];
}
