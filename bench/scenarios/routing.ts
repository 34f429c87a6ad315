import path from 'node:path';
import { figureBelow, throughputAtLeast } from '../harness/goals.ts';
import { measureInTurn, type Measurement } from '../harness/load.ts';
import { withChildServers, type ChildServerOptions } from '../harness/processes.ts';
import { generatedProjects } from '../harness/projects.ts';
import { medianProcessRow, type Row, type Section } from '../harness/results.ts';
import { serviceProcess } from '../harness/service.ts';
import type { BenchContext } from './context.ts';
import { routedPath } from './requests.ts';

/** Issue 13: spawn to the first `/healthz` answer with all the generated projects. */
const STARTUP_LIMIT_MS = 2000;

/** Processes of each service, each row the median of them (`medianProcessRow`): the two servers differ by less than processes do. */
const PROCESSES_PER_SERVICE = 3;

/**
 * SPEC §14.4: a route of the last of many projects vs the same route with one project loaded,
 * three processes of each running and measured in turn, and their start-up times (spawn to the
 * first `/healthz` answer, Node's own boot included; they start one after the other). The
 * start-up target holds for the slowest of the three.
 */
export async function routingSection(context: BenchContext): Promise<Section> {
  const { projects, routesPerProject, rounds } = context.settings;
  context.progress(`4. routing: ${projects} projects and 1 project × ${routesPerProject} routes, ${PROCESSES_PER_SERVICE} processes of each, in turn, ${rounds} rounds`);
  const services = [routingService(context, projects, routesPerProject), routingService(context, 1, routesPerProject)];
  // The processes in order of their service: the first PROCESSES_PER_SERVICE are the first service's.
  const ofService = <Item>(items: readonly Item[], at: number) => items.slice(at * PROCESSES_PER_SERVICE, (at + 1) * PROCESSES_PER_SERVICE);
  const processes = services.flatMap((service) => Array.from({ length: PROCESSES_PER_SERVICE }, (_, copy) => ({ service, options: { ...service.options, name: `${service.options.name} #${copy + 1}` } })));
  const [many, one] = await withChildServers(
    processes.map((each) => each.options),
    async (servers) => {
      const runs = await measureInTurn(servers.map((server, index) => ({ target: routedPath(server.origin, processes[index]?.service.path ?? ''), server })), context.settings);
      return services.map((service, at) => routingRow(service, ofService(runs, at), ofService(servers, at).map((server) => server.startupMs)));
    },
  );
  if (many === undefined || one === undefined) throw new Error('routing: a service was not measured');
  return {
    title: '4. routing',
    rows: [many.row, one.row],
    verdicts: [
      throughputAtLeast(many.row, one.row, 0.9),
      figureBelow(`start-up with ${projects} projects`, Math.round(many.slowestStartupMs), STARTUP_LIMIT_MS, 'ms', many.row),
    ],
  };
}

interface RoutingService {
  readonly label: string;
  readonly path: string;
  readonly options: ChildServerOptions;
}

function routingService(context: BenchContext, count: number, routesPerProject: number): RoutingService {
  const label = `${count} project${count === 1 ? '' : 's'} × ${routesPerProject} routes`;
  const target = generatedProjects(path.join(context.setup.root, 'routing'), count, routesPerProject);
  return { label, path: target.path, options: serviceProcess(context.setup, label, target.projectsDir, 'p000') };
}

function routingRow(service: RoutingService, runs: readonly Measurement[], startupsMs: readonly number[]): { row: Row; slowestStartupMs: number } {
  const startups = startupsMs.map((ms) => Math.round(ms)).join(', ');
  const row = medianProcessRow(`spaceport, ${service.label}`, runs, `start-up ${startups} ms; GET ${service.path}`);
  return { row, slowestStartupMs: Math.max(...startupsMs) };
}
