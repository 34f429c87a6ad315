import mime from 'mime-types';

export type HeaderValue = string | number | boolean | readonly (string | number | boolean)[];

/** Express 5's check of `res.status(code)`: an integer from 100 to 999. */
export function checkedStatus(code: number): number {
  if (!Number.isInteger(code)) {
    throw new TypeError(`Invalid status code: ${JSON.stringify(code)}. Status code must be an integer.`);
  }
  if (code < 100 || code > 999) {
    throw new RangeError(`Invalid status code: ${JSON.stringify(code)}. Status code must be greater than 99 and less than 1000.`);
  }
  return code;
}

/** A header's value as Express's `res.set` writes it: stringified, a Content-Type completed by its charset. */
export function headerText(field: string, value: HeaderValue | undefined): string | string[] {
  const text: string | string[] = Array.isArray(value) ? value.map(String) : String(value);
  if (field.toLowerCase() !== 'content-type') return text;
  if (Array.isArray(text)) throw new TypeError('Content-Type cannot be set to an Array');
  return String(mime.contentType(text));
}

/** The value after `res.append`: the earlier values kept, an empty one replaced. */
export function appendedValue(previous: string | string[] | number | undefined, value: string | string[]): string | string[] {
  if (previous === undefined || previous === '') return value;
  const earlier = Array.isArray(previous) ? previous : [String(previous)];
  return earlier.concat(value);
}

/** `res.type`'s argument as a Content-Type: a type as given, an extension name looked up. */
export function typeNamed(type: string): string {
  return type.includes('/') ? type : mime.contentType(type) || 'application/octet-stream';
}
