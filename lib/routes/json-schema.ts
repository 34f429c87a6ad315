import { createRequire } from 'node:module';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import type ajvFormats from 'ajv-formats';
import { firstViolations, type SchemaCheck, type Violation } from './schema-check.ts';

/** ajv and its formats (some 90 modules) are read when a first schema is compiled: most services compile none. */
const load = createRequire(import.meta.url);

/** Keywords OpenAPI 3.1 adds to JSON Schema: accepted as annotations, never checked. */
const OPENAPI_KEYWORDS = ['example', 'xml', 'externalDocs', 'discriminator'];
const DIALECT = 'https://json-schema.org/draft/2020-12/schema';

export type Compiled = { readonly check: SchemaCheck } | { readonly problem: string };

/**
 * Compiles one project's JSON Schemas (draft 2020-12) with ajv, strict so that a misspelt keyword
 * is a start-up problem, not a schema allowing everything. One per project: `$id`s never collide.
 */
export class JsonSchemaCompiler {
  #exact: Ajv2020 | undefined;
  #coercing: Ajv2020 | undefined;

  /** `coerce`: URL values are strings, checked as ajv coerces them (`"5"` is an integer); the handler gets them as sent. */
  compile(schema: object, options: { readonly coerce: boolean }): Compiled {
    const { $schema: dialect } = schema as { $schema?: unknown };
    if (dialect !== undefined && dialect !== DIALECT && dialect !== `${DIALECT}#`) {
      return { problem: `declares $schema ${JSON.stringify(dialect)}: write draft 2020-12 (OpenAPI 3.1's dialect) and leave $schema out` };
    }
    const ajv = this.#ajv(options.coerce);
    try {
      if (!ajv.validateSchema(schema)) return { problem: `is not a valid JSON Schema: ${describeSchemaError(ajv.errors)}` };
      const validate = ajv.compile(schema);
      return { check: options.coerce ? coercingCheck(validate) : exactCheck(validate) };
    } catch (error) {
      return { problem: `is not a valid JSON Schema: ${(error as Error).message}` };
    }
  }

  #ajv(coerce: boolean): Ajv2020 {
    if (coerce) {
      this.#coercing ??= createAjv(true);
      return this.#coercing;
    }
    this.#exact ??= createAjv(false);
    return this.#exact;
  }
}

function createAjv(coerce: boolean): Ajv2020 {
  const { Ajv2020: Compiler } = load('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const formats = load('ajv-formats') as typeof ajvFormats;
  // allErrors: a 400 names every field at fault at once (SPEC §8.13), not the first alone.
  const ajv = new Compiler({ strict: true, strictTypes: false, strictTuples: false, allErrors: true, coerceTypes: coerce ? 'array' : false, logger: false });
  formats.default(ajv);
  ajv.addFormat('url', boundedUrlFormat(formats.default.get('url')));
  ajv.addVocabulary(OPENAPI_KEYWORDS);
  return ajv;
}

/**
 * Longer strings are not URLs for `format: "url"` (browsers and sitemaps stop at 2 048 to 2 083 characters).
 * ajv-formats' pattern for it takes time quadratic in the length of a string it refuses: 80 000 characters held the
 * event loop 2.7 s, and `maxLength` beside it does not spare it (allErrors checks every keyword).
 */
const LONGEST_URL = 2083;

function boundedUrlFormat(pattern: unknown): { type: 'string'; validate: (value: string) => boolean } {
  if (!(pattern instanceof RegExp)) throw new Error('ajv-formats no longer gives "url" as a pattern: see LONGEST_URL');
  return { type: 'string', validate: (value) => value.length <= LONGEST_URL && pattern.test(value) };
}

function exactCheck(validate: ValidateFunction): SchemaCheck {
  return (value) => (validate(value) ? [] : violationsOf(validate.errors));
}

/** Coercion rewrites the data it checks: it works on a copy, so the handler sees what was sent. */
function coercingCheck(validate: ValidateFunction): SchemaCheck {
  return (value) => {
    const copy = structuredClone(value);
    return validate(copy) ? [] : violationsOf(validate.errors);
  };
}

function violationsOf(errors: readonly ErrorObject[] | null | undefined): Violation[] {
  return errors === null || errors === undefined || errors.length === 0 ? [{ path: [], message: 'is invalid' }] : firstViolations(errors, violationOf);
}

/** ajv's error, reworded where the field at fault is a property it names in `params`. */
function violationOf(error: ErrorObject): Violation {
  const path = pointerSegments(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { path: [...path, String(params.missingProperty)], message: 'is required' };
    case 'additionalProperties':
      return { path: [...path, String(params.additionalProperty)], message: 'is not allowed' };
    case 'unevaluatedProperties':
      return { path: [...path, String(params.unevaluatedProperty)], message: 'is not allowed' };
    case 'type':
      return { path, message: `must be ${typeNames(params.type)}` };
    case 'enum':
      return { path, message: `must be one of ${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}` };
    case 'const':
      return { path, message: `must be ${JSON.stringify(params.allowedValue)}` };
    default:
      return { path, message: BOUNDS[error.keyword]?.(Number(params.limit)) ?? error.message ?? 'is invalid' };
  }
}

const counted = (limit: number, one: string, many = `${one}s`) => `${limit} ${limit === 1 ? one : many}`;

/** A length or a count out of bounds, said plainly: ajv writes `must NOT have fewer than 3 characters`. */
const BOUNDS: Readonly<Record<string, (limit: number) => string>> = {
  minLength: (limit) => `must be at least ${counted(limit, 'character')} long`,
  maxLength: (limit) => `must be at most ${counted(limit, 'character')} long`,
  minItems: (limit) => `must have at least ${counted(limit, 'item')}`,
  maxItems: (limit) => `must have at most ${counted(limit, 'item')}`,
  minProperties: (limit) => `must have at least ${counted(limit, 'property', 'properties')}`,
  maxProperties: (limit) => `must have at most ${counted(limit, 'property', 'properties')}`,
};

/** `["number", "null"]` → `a number or null`. */
function typeNames(types: unknown): string {
  const names = (Array.isArray(types) ? types : String(types).split(',')).map(String);
  return names.map((name) => (name === 'null' ? 'null' : `${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name}`)).join(' or ');
}

/** A JSON pointer (`/items/0/a~1b`) as its keys. */
function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** The first thing the meta-schema rejects, where it is in the schema. */
function describeSchemaError(errors: readonly ErrorObject[] | null | undefined): string {
  const [error] = errors ?? [];
  if (error === undefined) return 'rejected by the JSON Schema meta-schema';
  return `${error.instancePath === '' ? 'at its root' : `at ${error.instancePath}`}: ${error.message ?? 'invalid'}`;
}
