import path from 'node:path';
import { throughputAtLeast } from '../harness/goals.ts';
import { measureInTurn, type Measurement } from '../harness/load.ts';
import { withChildServer, withChildServers, type ChildServer, type ChildServerOptions } from '../harness/processes.ts';
import type { Row, Section, Verdict } from '../harness/results.ts';
import { serviceProcess } from '../harness/service.ts';
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

/** Issue 24: what observability costs on the heartbeat, each the same service with one switch on. */
const VARIANTS: ReadonlyArray<{ name: string; note: string; env: (sinkOrigin: string) => Record<string, string> }> = [
  { name: 'spaceport, metrics on', note: 'METRICS_TOKEN set (not scraped)', env: () => ({ METRICS_TOKEN: 'bench-metrics-token-0123456789' }) },
  {
    name: 'spaceport, tracing on',
    note: 'OTLP/HTTP export to a local sink',
    env: (sinkOrigin) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: sinkOrigin, OTEL_SERVICE_NAME: 'spaceport-bench' }),
  },
];
/** Metrics on stays within 3 % of the plain service's throughput (issue 24). */
const METRICS_ON_FACTOR = 0.97;

/**
 * SPEC §14.1: the heartbeat through the whole chain vs the same service with metrics on and with
 * tracing on, and vs the same answer on leaner stacks, every server running at once (idle while
 * not measured) and measured in turn, round after round.
 */
export async function heartbeatSection(context: BenchContext, service: ChildServer): Promise<Section> {
  context.progress(`1. heartbeat: spaceport, with metrics and with tracing, and ${COMPARISONS.length} comparison servers, in turn, ${context.settings.rounds} rounds`);
  const sink: ChildServerOptions = { name: 'OTLP sink', script: path.join(SERVERS, 'otlp-sink.ts'), env: {}, readyPath: '/' };
  return withChildServer(sink, (traceSink) => {
    const options = [...variantProcesses(context, traceSink.origin), ...COMPARISONS.map((comparison) => comparisonProcess(context, comparison.name, comparison.script))];
    return withChildServers(options, async (started) => {
      const runs = await measureInTurn([service, ...started].map((server) => ({ target: heartbeat(server.origin), server })), context.settings);
      const subject: Row = { server: 'spaceport (whole chain)', measurement: runAt(runs, 0) };
      const variants: Row[] = VARIANTS.map((variant, index) => ({ server: variant.name, measurement: runAt(runs, index + 1), note: variant.note }));
      const comparisons: Row[] = COMPARISONS.map((comparison, index) => ({
        server: comparison.name,
        measurement: runAt(runs, index + 1 + VARIANTS.length),
        note: comparison.note,
      }));
      const verdicts = [...TARGETS.map((target) => throughputAtLeast(subject, rowNamed(comparisons, target.server), target.factor)), metricsVerdict(variants, subject)];
      return { title: '1. GET /api/sample/heartbeat', rows: [subject, ...variants, ...comparisons], verdicts };
    });
  });
}

/** The service as the subject runs it, once with `METRICS_TOKEN`, once exporting traces to `sinkOrigin`. */
function variantProcesses(context: BenchContext, sinkOrigin: string): ChildServerOptions[] {
  const plain = serviceProcess(context.setup, 'spaceport', context.projectsDir, 'sample');
  return VARIANTS.map((variant) => ({ ...plain, name: variant.name, env: { ...plain.env, ...variant.env(sinkOrigin) } }));
}

function comparisonProcess(context: BenchContext, name: string, script: string): ChildServerOptions {
  return { name, script: path.join(SERVERS, script), env: { DATABASE_URL: context.setup.databaseUrl }, readyPath: '/api/sample/heartbeat' };
}

function metricsVerdict(variants: readonly Row[], subject: Row): Verdict {
  const verdict = throughputAtLeast(rowNamed(variants, 'spaceport, metrics on'), subject, METRICS_ON_FACTOR);
  return { ...verdict, target: `metrics on: ${verdict.target}` };
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
