import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import pg from 'pg';
import { declaredPath, pathKeys } from '../../lib/documents/index-keys.ts';
import { FIND_ACCOUNT } from './lookups.ts';
import { listenFromEnvironment } from './common.ts';

/**
 * `POST /api/sample/getOneAccount` written by hand over a bare `pg` pool: read the JSON body,
 * run the one indexed query, drop the password, answer. The floor for the sample's handler.
 * And `GET /api/benchmark/events/:from`, the floor for item 7's find: one page of a range of
 * scores, highest first, read in order from the declared index (the benchmark fixture's
 * api/indexes.js), as someone who knows every score is a number would write it by hand.
 */
const PATH = '/api/sample/getOneAccount';
const EVENTS_PATH = /^\/api\/benchmark\/events\/(\d+)$/;
/** As the fixture's route asks: a range of 100 scores, 20 documents. */
const WINDOW = 100;
const BODY_LIMIT = 1_048_576;
/** The declared index's own key expressions (lib/documents/index-keys.ts), so that the query uses it. */
const score = pathKeys(declaredPath('score'));
const FIND_EVENTS = `select doc from documents where tenant = $1 and collection = 'events'
  and ${score.rank} = 2 and ${score.text} is null and ${score.json} >= $2::jsonb and ${score.json} < $3::jsonb
  order by ${score.rank} desc, ${score.text} desc, ${score.json} desc, id limit 20`;

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

const server = createServer((request, response) => {
  const events = request.method === 'GET' ? EVENTS_PATH.exec(request.url ?? '') : null;
  if (events !== null) {
    findEvents(request, Number(events[1])).then(
      (body) => answer(response, 200, body),
      (error: unknown) => answer(response, 500, { success: false, message: (error as Error).message }),
    );
    return;
  }
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

async function findEvents(request: IncomingMessage, from: number): Promise<object> {
  const tenant = typeof request.headers.tenant === 'string' ? request.headers.tenant : 'default';
  const found = await pool.query<{ doc: Record<string, unknown> }>(FIND_EVENTS, [tenant, JSON.stringify(from), JSON.stringify(from + WINDOW)]);
  return { success: true, data: found.rows.map(({ doc }) => doc) };
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
