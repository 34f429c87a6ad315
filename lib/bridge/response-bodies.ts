import contentType from 'content-type';
import escapeHtml from 'escape-html';
import statuses from 'statuses';

/** The body and type of Express's redirect answer, by what the client accepts (text first). */
export function redirectBody(format: string | false, status: number, address: string): { type?: string; body: string } {
  const message = statuses.message[status];
  if (format === 'text') return { type: 'text/plain', body: `${message}. Redirecting to ${address}` };
  if (format !== 'html') return { body: '' };
  const page = `<!DOCTYPE html><head><title>${message}</title></head><body><p>${message}. Redirecting to ${escapeHtml(address)}</p></body>`;
  return { type: 'text/html', body: page };
}

/** `type` with `charset=utf-8`, as Express sets it for a string body. */
export function withCharset(type: string): string {
  const parsed = contentType.parse(type);
  parsed.parameters.charset = 'utf-8';
  return contentType.format(parsed);
}

export function toBuffer(data: string | Uint8Array, encoding: BufferEncoding | undefined): Buffer {
  if (typeof data === 'string') return Buffer.from(data, encoding ?? 'utf8');
  return Buffer.isBuffer(data) ? data : Buffer.from(data);
}
