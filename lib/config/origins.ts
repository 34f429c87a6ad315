/** An exact origin, or a pattern for subdomains at any depth (`https://*.example.com`; `*.example.com` for both schemes). */
export interface OriginEntry {
  readonly scheme: 'http:' | 'https:' | undefined;
  readonly hostname: string;
  readonly subdomains: boolean;
  /** As `URL.port` gives it: empty for the scheme's default port. */
  readonly port: string;
}

const ENTRY = /^(?:(https?):\/\/)?(\*\.)?([a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/i;

/** The entry as `originAllowed` compares it; undefined for anything else (a URL with a path, `*`, a bare host). */
export function parseOriginEntry(entry: string): OriginEntry | undefined {
  const parts = ENTRY.exec(entry);
  if (parts === null) return undefined;
  const [, scheme, wildcard, host, port] = parts;
  // An exact origin always names its scheme: `example.com` alone is no origin.
  if (scheme === undefined && wildcard === undefined) return undefined;
  // `*.com` would let every site of a top-level domain in: a pattern names a domain of two labels at least.
  if (wildcard !== undefined && !host.includes('.')) return undefined;
  const url = new URL(`${scheme ?? 'https'}://${host}${port === undefined ? '' : `:${port}`}`);
  return { scheme: scheme === undefined ? undefined : (`${scheme.toLowerCase()}:` as 'http:' | 'https:'), hostname: url.hostname, subdomains: wildcard !== undefined, port: url.port };
}

/** Only an origin as browsers send it counts: anything else would be echoed back in `Access-Control-Allow-Origin`. */
export function originAllowed(entries: readonly OriginEntry[], origin: string): boolean {
  if (!URL.canParse(origin)) return false;
  const url = new URL(origin);
  if (url.origin !== origin || (url.protocol !== 'http:' && url.protocol !== 'https:')) return false;
  return entries.some((entry) => entryAllows(entry, url));
}

function entryAllows(entry: OriginEntry, url: URL): boolean {
  if (entry.scheme !== undefined && entry.scheme !== url.protocol) return false;
  if (entry.port !== url.port) return false;
  return entry.subdomains ? url.hostname.endsWith(`.${entry.hostname}`) : url.hostname === entry.hostname;
}
