import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import { firstViolations, type SchemaCheck, type Violation } from './schema-check.ts';

/**
 * A validator implementing Standard Schema with its JSON Schema converter (zod 4.2+, ArkType,
 * Valibot's adapter): checks and documents come from the schema, whichever copy of the library made it.
 */
export interface ValidatorSchema {
  readonly '~standard': StandardSchemaV1.Props & StandardJSONSchemaV1.Props;
}

export function isValidatorSchema(value: unknown): value is ValidatorSchema {
  const standard = standardProps(value);
  return standard !== undefined && typeof standard.validate === 'function' && typeof standard.jsonSchema === 'object' && standard.jsonSchema !== null;
}

/** A Standard Schema that cannot describe itself as JSON Schema (zod 3, for one): named in the report. */
export function isValidatorWithoutJsonSchema(value: unknown): boolean {
  return standardProps(value) !== undefined && !isValidatorSchema(value);
}

export function validatorCheck(schema: ValidatorSchema): SchemaCheck {
  return (value) => {
    const result = schema['~standard'].validate(value);
    return result instanceof Promise ? result.then(violationsOf) : violationsOf(result);
  };
}

/** What the schema accepts (`input`) or produces (`output`); an inexpressible type (a zod date) is "anything". */
export function validatorJsonSchema(schema: ValidatorSchema, direction: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...described } = schema['~standard'].jsonSchema[direction]({
    target: 'draft-2020-12',
    libraryOptions: { unrepresentable: 'any' },
  });
  return described;
}

function violationsOf(result: StandardSchemaV1.Result<unknown>): Violation[] {
  return firstViolations(result.issues ?? [], (issue) => ({
    path: (issue.path ?? []).map((segment) => (typeof segment === 'object' ? segment.key : segment)),
    message: issue.message,
  }));
}

function standardProps(value: unknown): Partial<ValidatorSchema['~standard']> | undefined {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return undefined;
  const standard = (value as { '~standard'?: unknown })['~standard'];
  return standard !== null && typeof standard === 'object' ? standard : undefined;
}
