import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the stand-in received on one call. */
export interface SsoCall {
  method: string;
  url: string;
  contentType: string | undefined;
  body: string;
}

/** How the stand-in answers a user token: by the token's name, so each test picks its case. */
export const SSO_TOKENS = {
  /** `{employeeId: <rest of the token>}`, e.g. `employee:alice`. */
  employeePrefix: 'employee:',
  refused: 'refused',
  garbage: 'garbage',
  noEmployeeId: 'no-employee-id',
  silent: 'silent',
  stalledBody: 'stalled-body',
} as const;

export interface SsoStandIn {
  /** Base URL to configure as `sso.authUrl`. */
  readonly url: string;
  readonly calls: SsoCall[];
  close(): Promise<void>;
}

/** A real single-sign-on stand-in on loopback, answering `POST /verify` as SSO_TOKENS says. */
export async function startSsoStandIn(): Promise<SsoStandIn> {
  const calls: SsoCall[] = [];
  const server = createServer((request, response) => {
    void readBody(request).then((body) => {
      calls.push({ method: request.method ?? '', url: request.url ?? '', contentType: request.headers['content-type'], body });
      answer(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { url: `http://127.0.0.1:${port}`, calls, close };
}

function answer(request: IncomingMessage, response: ServerResponse, body: string): void {
  if (request.method !== 'POST' || request.url !== '/verify') {
    response.writeHead(404).end();
    return;
  }
  const token = tokenOf(body);
  if (token.startsWith(SSO_TOKENS.employeePrefix)) {
    sendJson(response, 200, { employeeId: token.slice(SSO_TOKENS.employeePrefix.length) });
    return;
  }
  switch (token) {
    case SSO_TOKENS.refused:
      sendJson(response, 401, { error: 'token expired' });
      return;
    case SSO_TOKENS.garbage:
      response.writeHead(200, { 'content-type': 'application/json' }).end('<html>not json');
      return;
    case SSO_TOKENS.noEmployeeId:
      sendJson(response, 200, { name: 'Someone' });
      return;
    case SSO_TOKENS.silent:
      return; // never answers: the caller's time limit must end the wait
    case SSO_TOKENS.stalledBody:
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"employeeId":');
      return;
    default:
      sendJson(response, 400, { error: 'unknown token' });
      return;
  }
}

function tokenOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { token?: unknown };
    return typeof parsed.token === 'string' ? parsed.token : '';
  } catch {
    return '';
  }
}

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}
