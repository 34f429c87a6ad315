import { frozenJson, isPlainObject, type JsonObject } from '../values/json.ts';
import { fileFieldsOf, type FileFields } from './file-fields.ts';
import type { JsonSchemaCompiler } from './json-schema.ts';
import { kindOf } from '../values/kind-of.ts';
import type { SchemaCheck } from './schema-check.ts';
import { isValidatorSchema, isValidatorWithoutJsonSchema, validatorCheck, validatorJsonSchema } from './standard-schema.ts';

/** The request parts a route may declare a schema for, checked in this order. */
export const REQUEST_PARTS = ['params', 'query', 'body'] as const;
export type RequestPart = (typeof REQUEST_PARTS)[number];
const SCHEMA_KEYS: readonly string[] = [...REQUEST_PARTS, 'responses'];
const STATUS_CODE = /^[1-5]\d\d$/;

/** A route's `schema` (SPEC §8.1), compiled once at start-up. */
export interface CompiledRouteSchema {
  /** What runs before the handler, one check per declared request part. */
  readonly checks: Readonly<Partial<Record<RequestPart, SchemaCheck>>>;
  /** The body's file fields (`format: "binary"`), checked against the files received. */
  readonly files?: FileFields;
  /** What `/openapi.json` shows: each declared schema as JSON Schema (draft 2020-12). */
  readonly documents: SchemaDocuments;
}

export interface SchemaDocuments {
  readonly params?: JsonObject;
  readonly query?: JsonObject;
  readonly body?: JsonObject;
  /** By status code (`"200"`, `"404"`). */
  readonly responses: Readonly<Record<string, JsonObject>>;
}

export interface ReadSchema {
  readonly problems: readonly string[];
  readonly schema: CompiledRouteSchema | undefined;
}

type Declared = { readonly check: SchemaCheck; readonly document: JsonObject } | { readonly problem: string };

/** Reads a route's `schema`, naming every problem; `pathParameters`: the path's, when it is valid. */
export function readRouteSchema(declared: unknown, compiler: JsonSchemaCompiler, pathParameters: readonly string[] | undefined): ReadSchema {
  if (!isPlainObject(declared)) {
    return { problems: [`schema must be an object of params, query, body and responses (got ${kindOf(declared)})`], schema: undefined };
  }
  const problems: string[] = [];
  for (const key of Object.keys(declared)) {
    if (!SCHEMA_KEYS.includes(key)) problems.push(`schema: unknown key "${key}" (expected ${SCHEMA_KEYS.join(', ')})`);
  }
  const checks: Partial<Record<RequestPart, SchemaCheck>> = {};
  const documents: { -readonly [Part in RequestPart]?: JsonObject } = {};
  for (const part of REQUEST_PARTS) {
    if (declared[part] === undefined) continue;
    const read = readOne(declared[part], compiler, { coerce: part !== 'body', direction: 'input' });
    if ('problem' in read) {
      problems.push(`schema.${part} ${read.problem}`);
      continue;
    }
    const shapeProblem = requestPartProblem(part, read.document, pathParameters);
    if (shapeProblem !== undefined) problems.push(shapeProblem);
    checks[part] = read.check;
    documents[part] = read.document;
  }
  const responses = readResponses(declared.responses, compiler, problems);
  if (problems.length > 0) return { problems, schema: undefined };
  const files = documents.body === undefined ? undefined : fileFieldsOf(documents.body);
  return { problems, schema: Object.freeze({ checks: Object.freeze(checks), files, documents: Object.freeze({ ...documents, responses }) }) };
}

function readResponses(declared: unknown, compiler: JsonSchemaCompiler, problems: string[]): Readonly<Record<string, JsonObject>> {
  const responses: Record<string, JsonObject> = {};
  if (declared === undefined) return responses;
  if (!isPlainObject(declared)) {
    problems.push(`schema.responses must be an object of schemas by status code (got ${kindOf(declared)})`);
    return responses;
  }
  for (const [status, schema] of Object.entries(declared)) {
    if (!STATUS_CODE.test(status)) {
      problems.push(`schema.responses: "${status}" is not a status code (100-599)`);
      continue;
    }
    const read = readOne(schema, compiler, { coerce: false, direction: 'output' });
    if ('problem' in read) problems.push(`schema.responses.${status} ${read.problem}`);
    else responses[status] = read.document;
  }
  return Object.freeze(responses);
}

function readOne(schema: unknown, compiler: JsonSchemaCompiler, options: { coerce: boolean; direction: 'input' | 'output' }): Declared {
  if (isValidatorSchema(schema)) {
    try {
      return { check: validatorCheck(schema), document: frozenJson(validatorJsonSchema(schema, options.direction)) };
    } catch (error) {
      return { problem: `cannot be described as JSON Schema: ${(error as Error).message}` };
    }
  }
  if (isValidatorWithoutJsonSchema(schema)) {
    return { problem: 'is a validator schema that cannot describe itself as JSON Schema (zod 3?): use zod 4, or write JSON Schema' };
  }
  if (!isPlainObject(schema)) return { problem: `must be a JSON Schema object or a zod schema (got ${kindOf(schema)})` };
  const compiled = compiler.compile(schema, { coerce: options.coerce });
  return 'problem' in compiled ? compiled : { check: compiled.check, document: frozenJson(schema) };
}

/** Params and query are objects of strings; a params schema names only the path's parameters. */
function requestPartProblem(part: RequestPart, document: JsonObject, pathParameters: readonly string[] | undefined): string | undefined {
  if (part === 'body') return undefined;
  const { type, properties } = document;
  if (type !== undefined && type !== 'object' && !(Array.isArray(type) && type.includes('object'))) {
    return `schema.${part} must describe an object (its type is ${JSON.stringify(type)})`;
  }
  if (part !== 'params' || pathParameters === undefined || !isPlainObject(properties)) return undefined;
  const unknown = Object.keys(properties).filter((name) => !pathParameters.includes(name));
  if (unknown.length === 0) return undefined;
  const declared = pathParameters.length === 0 ? 'none' : pathParameters.map((name) => `:${name}`).join(', ');
  return `schema.params names ${unknown.map((name) => `"${name}"`).join(', ')}, not a parameter of the path (its parameters: ${declared})`;
}
