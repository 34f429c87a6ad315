import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import pg from 'pg';
import { listenFromEnvironment } from './common.ts';

/**
 * `POST /api/sample/getOneAccount` written by hand over a bare `pg` pool: read the JSON body,
 * run the one indexed query, drop the password, answer. The floor for the sample's handler.
 */
const PATH = '/api/sample/getOneAccount';
const BODY_LIMIT = 1_048_576;
/** The username index is on the stored `account_username` column (migration 4). */
const FIND_ACCOUNT = "select doc from documents where tenant = $1 and collection = 'accounts' and account_username = $2 limit 1";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

const server = createServer((request, response) => {
  if (request.method !== 'POST' || request.url !== PATH) {
    answer(response, 404, { error: 'Not Found' });
    return;
  }
  getOneAccount(request).then(
    (body) => answer(response, 200, body),
    (error: unknown) => answer(response, 500, { success: false, message: (error as Error).message }),
  );
});

async function getOneAccount(request: IncomingMessage): Promise<object> {
  const body = JSON.parse(await readBody(request)) as { EMPLOYEE_ID?: unknown };
  if (typeof body.EMPLOYEE_ID !== 'string') throw new Error('EMPLOYEE_ID is required');
  const tenant = typeof request.headers.tenant === 'string' ? request.headers.tenant : 'default';
  const found = await pool.query<{ doc: Record<string, unknown> }>(FIND_ACCOUNT, [tenant, body.EMPLOYEE_ID]);
  const data = found.rows.map(({ doc }) => {
    const { password: _password, ...visible } = doc;
    return visible;
  });
  return { success: true, data, total: data.length };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) throw new Error('request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function answer(response: ServerResponse, status: number, body: object): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}

listenFromEnvironment(server, () => pool.end());
