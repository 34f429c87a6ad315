import pg from 'pg';
import { isReusable } from './connect.ts';

/** `idleTimeoutMs`: how long a connection may sit idle before it is closed (pg's default 10 s; 0 = never). */
export function newPool(url: string, max: number, connectTimeoutMs: number, onIdleError: (error: Error) => void, idleTimeoutMs = 10_000): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    connectionTimeoutMillis: connectTimeoutMs,
    idleTimeoutMillis: idleTimeoutMs,
    keepAlive: true,
    max,
    // A connection that fails while in use fails its statement too, which is answered (503);
    // the event itself must not go unheard, or it would end the process.
    onConnect: (client) => void client.on('error', () => {}),
  });
  pool.on('error', onIdleError);
  return pool;
}

export async function onConnectionOf<Result>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<Result>): Promise<Result> {
  const client = await pool.connect();
  try {
    const result = await work(client);
    client.release();
    return result;
  } catch (error) {
    // A connection left mid-statement or inside a transaction is closed, never reused.
    client.release(isReusable(client as pg.PoolClient & { readyForQuery?: boolean }) ? undefined : (error as Error));
    throw error;
  }
}
