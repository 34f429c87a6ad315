import statuses from 'statuses';
import { jsonContent, jsonResponse, ref, type Json, type JsonObject } from './components.ts';
import type { NonJsonAnswer } from '../routes/declaration.ts';

/** A declared schema, placed under `components.schemas`. */
export interface PlacedSchema {
  readonly name: string;
  /** Its content, references rebased: parts of it may be copied anywhere in the document. */
  readonly schema: JsonObject;
}

export interface DeclaredSchemas {
  readonly params?: PlacedSchema;
  readonly query?: PlacedSchema;
  readonly body?: PlacedSchema;
  readonly responses: Readonly<Record<string, PlacedSchema | undefined>>;
}

/**
 * One parameter per property of the params and query schemas; a query schema without plain
 * properties (a union, say) is one object parameter spread over the query string.
 */
export function declaredParameters(declared: DeclaredSchemas, rename: (name: string) => string | undefined): Json[] {
  const parameters: Json[] = [];
  if (declared.params !== undefined) {
    for (const [name, schema] of properties(declared.params.schema)) {
      // A parameter of an optional group is not one of the path listed without it.
      const named = rename(name);
      if (named !== undefined) parameters.push({ name: named, in: 'path', required: true, schema });
    }
  }
  if (declared.query !== undefined) {
    const { schema, name: component } = declared.query;
    const required = Array.isArray(schema.required) ? schema.required : [];
    const listed = properties(schema);
    if (listed.length === 0) parameters.push({ name: 'query', in: 'query', style: 'form', explode: true, schema: ref('schemas', component) });
    for (const [name, property] of listed) parameters.push({ name, in: 'query', required: required.includes(name), schema: property });
  }
  return parameters;
}

/** JSON, or `multipart/form-data` with a file field: `/docs` then offers a file picker, a generated client a form. */
export function declaredRequestBody(body: PlacedSchema): JsonObject {
  const schema = ref('schemas', body.name);
  if (!properties(body.schema).some(([, property]) => isFileField(property))) return { required: true, content: jsonContent(schema) };
  return { required: true, content: { 'multipart/form-data': { schema } } };
}

function isFileField(property: Json): boolean {
  if (property === null || typeof property !== 'object' || Array.isArray(property)) return false;
  const field = property as JsonObject;
  if (field.type === 'array' && field.items !== undefined) return isFileField(field.items);
  return field.type === 'string' && field.format === 'binary';
}

/** The declared answers, winning over the chain's own; without a success answer, the generic 200 or `answer`. */
export function declaredResponses(
  declared: DeclaredSchemas,
  successHeaders: JsonObject | undefined,
  answerHeaders: Readonly<Record<string, JsonObject>> = {},
  answer?: NonJsonAnswer,
): JsonObject {
  const responses: Record<string, Json> = {};
  for (const [status, placed] of Object.entries(declared.responses)) {
    if (placed === undefined) continue;
    const description = typeof placed.schema.description === 'string' ? placed.schema.description : (statuses.message[Number(status)] ?? `Status ${status}`);
    const headers = { ...(isSuccess(status) ? successHeaders : undefined), ...answerHeaders[status] };
    responses[status] = jsonResponse(description, ref('schemas', placed.name), Object.keys(headers).length > 0 ? headers : undefined);
  }
  if (!Object.keys(responses).some(isSuccess)) {
    responses['200'] = undeclaredSuccess(successHeaders, answer);
  }
  return responses;
}

/** The generic 200 of a route that declares no answer; a non-JSON one says its media type. */
function undeclaredSuccess(successHeaders: JsonObject | undefined, answer: NonJsonAnswer | undefined): JsonObject {
  const response: Record<string, Json> = { description: answer?.description ?? 'Answered by the handler.' };
  if (successHeaders !== undefined) response.headers = successHeaders;
  if (answer !== undefined) response.content = { [answer.mediaType]: { schema: { type: 'string' } } };
  return response;
}

function isSuccess(status: string): boolean {
  return status.startsWith('2') || status.startsWith('3');
}

function properties(schema: JsonObject): Array<[string, Json]> {
  const listed = schema.properties;
  return listed !== null && typeof listed === 'object' && !Array.isArray(listed) ? Object.entries(listed as JsonObject) : [];
}
