import path from 'node:path';
import { throughputAtLeast } from '../harness/goals.ts';
import { measureInTurn } from '../harness/load.ts';
import { withChildServer, withChildServers, type ChildServer, type ChildServerOptions } from '../harness/processes.ts';
import { medianProcessRow, type Row, type Section, type Verdict } from '../harness/results.ts';
import { serviceProcess } from '../harness/service.ts';
import type { BenchContext } from './context.ts';
import { heartbeat } from './requests.ts';

const SERVERS = path.resolve(import.meta.dirname, '../servers');

/** The comparison servers, from most to least of the service's per-request work. */
/** Bare Koa, the target nearest the service's figure, runs in as many processes as the service: its processes differ as much. */
const COMPARISONS = [
  { name: 'bare Koa + same middleware', script: 'koa-native.ts', note: 'request id, log line, cached tenant, RateLimit-*', processes: 3 },
  { name: 'Fastify 5 + same work', script: 'fastify.ts', note: 'the same work in Fastify hooks', processes: 1 },
  { name: 'Express 5', script: 'express.ts', note: 'the route alone', processes: 1 },
  { name: 'node:http', script: 'node-http.ts', note: 'the route alone', processes: 1 },
] as const;

/** Issue 13: the whole chain against the comparison servers, by their names above. */
const TARGETS = [
  { server: 'bare Koa + same middleware', factor: 1.0 },
  { server: 'node:http', factor: 0.4 },
  { server: 'Express 5', factor: 2.0 },
] as const;

/**
 * Processes of the plain service and of the variants with a target in item 1, each row the median
 * of its processes (`medianProcessRow`): processes differ by more than the 3 % the metrics target
 * is about.
 */
const PROCESSES_PER_VARIANT = 3;

interface Variant {
  readonly name: string;
  readonly note?: string;
  readonly processes: number;
  readonly env: (sinkOrigin: string) => Record<string, string>;
}

/** Issue 24: what observability costs on the heartbeat, each the same service with one switch on; the first is the plain service. */
const PLAIN = 'spaceport (whole chain)';
const METRICS_ON = 'spaceport, metrics on';
const TRACING_ON = 'spaceport, tracing on';

function tracingTo(sinkOrigin: string): Record<string, string> {
  return { OTEL_EXPORTER_OTLP_ENDPOINT: sinkOrigin, OTEL_SERVICE_NAME: 'spaceport-bench' };
}

const VARIANTS: readonly Variant[] = [
  { name: PLAIN, processes: PROCESSES_PER_VARIANT, env: () => ({}) },
  { name: METRICS_ON, note: 'METRICS_TOKEN set (not scraped)', processes: PROCESSES_PER_VARIANT, env: () => ({ METRICS_TOKEN: 'bench-metrics-token-0123456789' }) },
  {
    name: TRACING_ON,
    note: 'OTLP/HTTP export to a local sink; the default sampler: no request carries a traceparent, one in ten recorded',
    processes: PROCESSES_PER_VARIANT,
    env: (sinkOrigin) => tracingTo(sinkOrigin),
  },
  {
    name: 'spaceport, tracing every request',
    note: 'the same with OTEL_TRACES_SAMPLER=parentbased_always_on: each request a span, exported',
    processes: 1,
    env: (sinkOrigin) => ({ ...tracingTo(sinkOrigin), OTEL_TRACES_SAMPLER: 'parentbased_always_on' }),
  },
];
/** Metrics on stays within 3 % of the plain service's throughput (issue 24). */
const METRICS_ON_FACTOR = 0.97;
/** Tracing on, with its default sampler, keeps 80 % of the plain service's throughput (issue 38). */
const TRACING_ON_FACTOR = 0.8;

/**
 * SPEC §14.1: the heartbeat through the whole chain vs the same service with metrics on and with
 * tracing on, and vs the same answer on leaner stacks, every server running at once (idle while
 * not measured) and measured in turn, round after round. `service`, started for items 1 to 3,
 * is the first process of the plain service.
 */
export async function heartbeatSection(context: BenchContext, service: ChildServer): Promise<Section> {
  const processes = VARIANTS.reduce((sum, variant) => sum + variant.processes, 0);
  const comparisonProcesses = COMPARISONS.flatMap((comparison, index) =>
    Array.from({ length: comparison.processes }, (_, copy) => ({
      comparison: index,
      options: comparisonProcess(context, comparison.processes === 1 ? comparison.name : `${comparison.name} #${copy + 1}`, comparison.script),
    })),
  );
  context.progress(`1. heartbeat: spaceport in ${processes} processes (plain, with metrics, with tracing sampled and of every request) and ${COMPARISONS.length} comparison servers in ${comparisonProcesses.length}, in turn, ${context.settings.rounds} rounds`);
  const sink: ChildServerOptions = { name: 'OTLP sink', script: path.join(SERVERS, 'otlp-sink.ts'), env: {}, readyPath: '/' };
  return withChildServer(sink, (traceSink) => {
    const spaceports = variantProcesses(context, traceSink.origin);
    const options = [...spaceports.map((started) => started.options), ...comparisonProcesses.map((started) => started.options)];
    return withChildServers(options, async (started) => {
      const servers = [service, ...started];
      const runs = await measureInTurn(servers.map((server) => ({ target: heartbeat(server.origin), server })), context.settings);
      // Run 0 is `service`, the plain variant's first process; then the started variant processes, then the comparisons'.
      const variantOf = [0, ...spaceports.map((process) => process.variant)];
      const comparisonOf = [...variantOf.map(() => -1), ...comparisonProcesses.map((process) => process.comparison)];
      const variantRows = VARIANTS.map((variant, index) => medianProcessRow(variant.name, runs.filter((_, run) => variantOf[run] === index), variant.note));
      const subject = rowNamed(variantRows, PLAIN);
      const variants = variantRows.filter((row) => row !== subject);
      const comparisons = COMPARISONS.map((comparison, index) => medianProcessRow(comparison.name, runs.filter((_, run) => comparisonOf[run] === index), comparison.note));
      const verdicts = [
        ...TARGETS.map((target) => throughputAtLeast(subject, rowNamed(comparisons, target.server), target.factor)),
        observabilityVerdict(variants, subject, METRICS_ON, METRICS_ON_FACTOR),
        observabilityVerdict(variants, subject, TRACING_ON, TRACING_ON_FACTOR),
      ];
      return { title: '1. GET /api/sample/heartbeat', rows: [subject, ...variants, ...comparisons], verdicts };
    });
  });
}

/** Every process of the variants but the plain service's first (`service`, already running), with the variant each runs. */
function variantProcesses(context: BenchContext, sinkOrigin: string): Array<{ variant: number; options: ChildServerOptions }> {
  const plain = serviceProcess(context.setup, 'spaceport', context.projectsDir, 'sample');
  return VARIANTS.flatMap((variant, index) =>
    Array.from({ length: index === 0 ? variant.processes - 1 : variant.processes }, (_, copy) => ({
      variant: index,
      options: { ...plain, name: `${variant.name} #${copy + 1}`, env: { ...plain.env, ...variant.env(sinkOrigin) } },
    })),
  );
}

function comparisonProcess(context: BenchContext, name: string, script: string): ChildServerOptions {
  return { name, script: path.join(SERVERS, script), env: { DATABASE_URL: context.setup.databaseUrl }, readyPath: '/api/sample/heartbeat' };
}

/** `variant` (`spaceport, metrics on`) keeps `factor` of the plain service's throughput; the target is named by the switch. */
function observabilityVerdict(variants: readonly Row[], subject: Row, variant: string, factor: number): Verdict {
  const verdict = throughputAtLeast(rowNamed(variants, variant), subject, factor);
  return { ...verdict, target: `${variant.replace('spaceport, ', '')}: ${verdict.target}` };
}

function rowNamed(rows: readonly Row[], server: string): Row {
  const row = rows.find((candidate) => candidate.server === server);
  if (row === undefined) throw new Error(`heartbeat: no row for ${server}`);
  return row;
}
