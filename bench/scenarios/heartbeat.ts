import path from 'node:path';
import { measure } from '../harness/load.ts';
import { withChildServer, type ChildServer } from '../harness/processes.ts';
import type { Row, Section } from '../harness/table.ts';
import { heartbeat } from './requests.ts';
import type { BenchContext } from './context.ts';

const SERVERS = path.resolve(import.meta.dirname, '../servers');

/** The comparison servers, from most to least of the service's per-request work. */
const COMPARISONS = [
  { name: 'bare Koa + same middleware', script: 'koa-native.ts', note: 'request id, log line, cached tenant, RateLimit-*' },
  { name: 'Express 5', script: 'express.ts', note: 'the route alone' },
  { name: 'node:http', script: 'node-http.ts', note: 'the route alone' },
] as const;

/** SPEC §14.1: the heartbeat through the whole chain vs the same answer on leaner stacks. */
export async function heartbeatSection(context: BenchContext, service: ChildServer): Promise<Section> {
  context.progress('1. heartbeat: spaceport');
  const rows: Row[] = [{ server: 'spaceport (whole chain)', measurement: await measure(heartbeat(service.origin), context.settings) }];
  for (const comparison of COMPARISONS) {
    context.progress(`1. heartbeat: ${comparison.name}`);
    const options = {
      name: comparison.name,
      script: path.join(SERVERS, comparison.script),
      env: { DATABASE_URL: context.setup.databaseUrl },
      readyPath: '/api/sample/heartbeat',
    };
    const measurement = await withChildServer(options, (server) => measure(heartbeat(server.origin), context.settings));
    rows.push({ server: comparison.name, measurement, note: comparison.note });
  }
  return { title: '1. GET /api/sample/heartbeat', rows };
}
