import path from 'node:path';
import { figureBelow, throughputAtLeast } from '../harness/goals.ts';
import { measureInTurn, type Measurement } from '../harness/load.ts';
import { withChildServers, type ChildServerOptions } from '../harness/processes.ts';
import { generatedProjects } from '../harness/projects.ts';
import type { Row, Section } from '../harness/results.ts';
import { serviceProcess } from '../harness/service.ts';
import type { BenchContext } from './context.ts';
import { routedPath } from './requests.ts';

/** Issue 13: spawn to the first `/healthz` answer with all the generated projects. */
const STARTUP_LIMIT_MS = 2000;

/**
 * SPEC §14.4: a route of the last of many projects vs the same route with one project loaded,
 * both services running and measured in turn, and the start-up time of each (spawn to the first
 * `/healthz` answer, Node's own boot included; they start one after the other).
 */
export async function routingSection(context: BenchContext): Promise<Section> {
  const { projects, routesPerProject, rounds } = context.settings;
  context.progress(`4. routing: ${projects} projects and 1 project × ${routesPerProject} routes, in turn, ${rounds} rounds`);
  const manyProjects = routingService(context, projects, routesPerProject);
  const oneProject = routingService(context, 1, routesPerProject);
  const [many, one] = await withChildServers([manyProjects.options, oneProject.options], async ([manyServer, oneServer]) => {
    const [manyRun, oneRun] = await measureInTurn(
      [
        { target: routedPath(manyServer.origin, manyProjects.path), server: manyServer },
        { target: routedPath(oneServer.origin, oneProject.path), server: oneServer },
      ],
      context.settings,
    );
    return [routingRow(manyProjects, manyRun, manyServer.startupMs), routingRow(oneProject, oneRun, oneServer.startupMs)] as const;
  });
  return {
    title: '4. routing',
    rows: [many.row, one.row],
    verdicts: [
      throughputAtLeast(many.row, one.row, 0.9),
      figureBelow(`start-up with ${projects} projects`, Math.round(many.startupMs), STARTUP_LIMIT_MS, 'ms', many.row),
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

function routingRow(service: RoutingService, measurement: Measurement, startupMs: number): { row: Row; startupMs: number } {
  const row = { server: `spaceport, ${service.label}`, measurement, note: `start-up ${Math.round(startupMs)} ms; GET ${service.path}` };
  return { row, startupMs };
}
