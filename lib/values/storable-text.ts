import type { Json } from './json.ts';

const LONE_SURROGATE = /\p{Cs}/u;

/** True when `text` could be stored: jsonb and PostgreSQL text hold neither NUL nor a lone surrogate. */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && !LONE_SURROGATE.test(text);
}

/** True when every string and key inside `value` could be stored. */
export function isStorable(value: Json): boolean {
  if (typeof value === 'string') return isStorableText(value);
  if (value === null || typeof value !== 'object') return true;
  if (Array.isArray(value)) return value.every(isStorable);
  return Object.entries(value).every(([key, child]) => isStorableText(key) && isStorable(child));
}
