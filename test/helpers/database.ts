import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The server the suite runs against: `make test` always sets DATABASE_URL (embedded or not). */
export function serverUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set: run the tests through `make test`');
  return url;
}

/** Creates an empty database on the test server and returns its URL and a function that drops it. */
export async function createFreshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `spaceport_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create database ${name}`);
  const url = new URL(serverUrl());
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(`drop database if exists ${name} with (force)`) };
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
