import contentType from 'content-type';
import etag from 'etag';
import escapeHtml from 'escape-html';
import statuses from 'statuses';

export const JSON_UTF8 = 'application/json; charset=utf-8';

/** The body and type of Express's redirect answer, by what the client accepts (text first). */
export function redirectBody(format: string | false, status: number, address: string): { type?: string; body: string } {
  const message = statuses.message[status];
  if (format === 'text') return { type: 'text/plain', body: `${message}. Redirecting to ${address}` };
  if (format !== 'html') return { body: '' };
  const page = `<!DOCTYPE html><head><title>${message}</title></head><body><p>${message}. Redirecting to ${escapeHtml(address)}</p></body>`;
  return { type: 'text/html', body: page };
}

/** The types strings were last sent with, and the same with `charset=utf-8`: a handler uses few. */
const charsetTypes = new Map<string, string>();
const CHARSET_TYPES_KEPT = 256;

/** `type` with `charset=utf-8`, as Express sets it for a string body. */
export function withCharset(type: string): string {
  let typed = charsetTypes.get(type);
  if (typed === undefined) {
    const parsed = contentType.parse(type);
    parsed.parameters.charset = 'utf-8';
    typed = contentType.format(parsed);
    if (charsetTypes.size >= CHARSET_TYPES_KEPT) charsetTypes.clear();
    charsetTypes.set(type, typed);
  }
  return typed;
}

/** Bodies sent again and again (a heartbeat, a fixed answer) and their ETags: a hash each time is waste. */
const etags = new Map<string, string>();
const ETAGS_KEPT = 1024;
const ETAG_BODY_CHARACTERS = 1024;

/** Express's weak ETag of a body; the ETags of short text bodies are remembered. */
export function weakEtag(body: string | Buffer): string {
  if (typeof body !== 'string' || body.length > ETAG_BODY_CHARACTERS) return etag(body, { weak: true });
  let tag = etags.get(body);
  if (tag === undefined) {
    tag = etag(body, { weak: true });
    if (etags.size >= ETAGS_KEPT) etags.delete(etags.keys().next().value as string);
    etags.set(body, tag);
  }
  return tag;
}

export function toBuffer(data: string | Uint8Array, encoding: BufferEncoding | undefined): Buffer {
  if (typeof data === 'string') return Buffer.from(data, encoding ?? 'utf8');
  return Buffer.isBuffer(data) ? data : Buffer.from(data);
}
