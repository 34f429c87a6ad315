/** `string`, `array`, `null`, ... for messages such as "must be a boolean (got string)". */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}
