/**
 * Methods a client commonly sends keep their name; any other (Node's parser accepts some forty,
 * `PROPFIND`, `MKCALENDAR`...) is counted as `other`, so a scanner cycling through them adds one
 * series, not forty.
 */
const NAMED_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function methodLabel(method: string): string {
  return NAMED_METHODS.has(method) ? method : 'other';
}
