import pg from 'pg';
import { backendCpuMicroseconds } from './database-cpu.ts';

/** One way of sending a statement: `send(n)` sends the n-th, on the connection whose backend is `backendPid`. */
export interface StatementWay {
  readonly label: string;
  readonly backendPid: number;
  send(n: number): Promise<unknown>;
}

const STATEMENTS = 3000;
const WARM_UP = 200;
const ROUNDS = 3;

/**
 * PostgreSQL's own CPU time per statement for each way, one statement at a time on one
 * connection: the backend's utime + stime (/proc) over `STATEMENTS` statements, the ways taken in
 * turn `ROUNDS` times and the median round kept. Microseconds, whole; undefined where /proc does
 * not show the backend (a database on another machine).
 */
export async function databaseCpuPerStatement(ways: readonly StatementWay[]): Promise<Array<number | undefined>> {
  const rounds: Array<Array<number | undefined>> = ways.map(() => []);
  for (const way of ways) for (let n = 0; n < WARM_UP; n++) await way.send(n);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, way] of ways.entries()) {
      const before = backendCpuMicroseconds(way.backendPid);
      for (let n = 0; n < STATEMENTS; n++) await way.send(n);
      const after = backendCpuMicroseconds(way.backendPid);
      rounds[index]?.push(before === undefined || after === undefined ? undefined : (after - before) / STATEMENTS);
    }
  }
  return rounds.map(median);
}

function median(values: ReadonlyArray<number | undefined>): number | undefined {
  if (values.some((value) => value === undefined)) return undefined;
  const sorted = (values as number[]).toSorted((a, b) => a - b);
  const middle = sorted[Math.floor((sorted.length - 1) / 2)];
  return middle === undefined ? undefined : Math.round(middle);
}

/** A plain pg client's way: `statement(n)` as pg sends it (unnamed unless it has a `name`). */
export async function clientWay(label: string, url: string, statement: (n: number) => pg.QueryConfig): Promise<StatementWay & { close(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  return { label, backendPid: rows[0]?.pid ?? 0, send: (n) => client.query(statement(n)), close: () => client.end() };
}
