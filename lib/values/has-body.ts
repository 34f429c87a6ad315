import type { IncomingMessage } from 'node:http';

/** Whether a request announces a body: by its transfer coding or its length (RFC 9112 §6.3); a length of 0 is none. */
export function hasBody(request: IncomingMessage): boolean {
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
}
