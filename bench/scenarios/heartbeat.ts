import path from 'node:path';
import { throughputAtLeast } from '../harness/goals.ts';
import { measureInTurn, type Measurement } from '../harness/load.ts';
import { withChildServers, type ChildServer } from '../harness/processes.ts';
import type { Row, Section } from '../harness/results.ts';
import type { BenchContext } from './context.ts';
import { heartbeat } from './requests.ts';

const SERVERS = path.resolve(import.meta.dirname, '../servers');

/** The comparison servers, from most to least of the service's per-request work. */
const COMPARISONS = [
  { name: 'bare Koa + same middleware', script: 'koa-native.ts', note: 'request id, log line, cached tenant, RateLimit-*' },
  { name: 'Fastify 5 + same work', script: 'fastify.ts', note: 'the same work in Fastify hooks' },
  { name: 'Express 5', script: 'express.ts', note: 'the route alone' },
  { name: 'node:http', script: 'node-http.ts', note: 'the route alone' },
] as const;

/** Issue 13: the whole chain against the comparison servers, by their names above. */
const TARGETS = [
  { server: 'bare Koa + same middleware', factor: 1.0 },
  { server: 'node:http', factor: 0.4 },
  { server: 'Express 5', factor: 2.0 },
] as const;

/**
 * SPEC §14.1: the heartbeat through the whole chain vs the same answer on leaner stacks, every
 * server running at once (idle while not measured) and measured in turn, round after round.
 */
export async function heartbeatSection(context: BenchContext, service: ChildServer): Promise<Section> {
  context.progress(`1. heartbeat: spaceport and ${COMPARISONS.length} comparison servers, in turn, ${context.settings.rounds} rounds`);
  const options = COMPARISONS.map((comparison) => ({
    name: comparison.name,
    script: path.join(SERVERS, comparison.script),
    env: { DATABASE_URL: context.setup.databaseUrl },
    readyPath: '/api/sample/heartbeat',
  }));
  return withChildServers(options, async (started) => {
    const runs = await measureInTurn([service, ...started].map((server) => ({ target: heartbeat(server.origin), server })), context.settings);
    const subject: Row = { server: 'spaceport (whole chain)', measurement: runAt(runs, 0) };
    const comparisons: Row[] = COMPARISONS.map((comparison, index) => ({ server: comparison.name, measurement: runAt(runs, index + 1), note: comparison.note }));
    const verdicts = TARGETS.map((target) => throughputAtLeast(subject, rowNamed(comparisons, target.server), target.factor));
    return { title: '1. GET /api/sample/heartbeat', rows: [subject, ...comparisons], verdicts };
  });
}

function runAt(runs: readonly Measurement[], index: number): Measurement {
  const run = runs[index];
  if (run === undefined) throw new Error(`heartbeat: no measurement for server ${index}`);
  return run;
}

function rowNamed(rows: readonly Row[], server: string): Row {
  const row = rows.find((candidate) => candidate.server === server);
  if (row === undefined) throw new Error(`heartbeat: no row for ${server}`);
  return row;
}
