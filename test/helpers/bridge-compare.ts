import type { RunningApp } from './bridge-apps.ts';

/** What a caller sees of one answer: what the differential tests compare. */
export interface Answer {
  status: number;
  type: string | null;
  location: string | null;
  body: string;
  headers: Record<string, string | null>;
}

/** Sends `pathname` to `app` and reads the answer, with the `headers` named. */
export async function answerOf(app: RunningApp, pathname: string, init: RequestInit = {}, headers: readonly string[] = []): Promise<Answer> {
  const response = await fetch(`${app.url}${pathname}`, { redirect: 'manual', ...init });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    location: response.headers.get('location'),
    body: await response.text(),
    headers: Object.fromEntries(headers.map((name) => [name, comparable(name, response.headers)])),
  };
}

/** `Expires` of a cookie with `maxAge` is computed at the time of the request: it may differ by a second. */
function comparable(name: string, headers: Headers): string | null {
  if (name !== 'set-cookie') return headers.get(name);
  return headers.getSetCookie().map((cookie) => cookie.replace(/Expires=[^;]+/, 'Expires=<date>')).join('\n');
}

/**
 * Whether the bridge answered as Express did: the same status, type, body, Location and
 * headers; where Express renders its HTML error page, spaceport's JSON error body (SPEC §7).
 */
export function sameAnswer(express: Answer, bridge: Answer): boolean {
  if (bridge.status !== express.status || bridge.location !== express.location) return false;
  if (express.status >= 400 && express.type?.startsWith('text/html')) {
    return bridge.type === 'application/json; charset=utf-8' && bridge.body.startsWith('{');
  }
  return bridge.type === express.type && bridge.body === express.body && JSON.stringify(bridge.headers) === JSON.stringify(express.headers);
}
