import path from 'node:path';
import { figureBelow, throughputAtLeast } from '../harness/goals.ts';
import { measure } from '../harness/load.ts';
import { withChildServer } from '../harness/processes.ts';
import { generatedProjects } from '../harness/projects.ts';
import type { Row, Section } from '../harness/results.ts';
import { serviceProcess } from '../harness/service.ts';
import type { BenchContext } from './context.ts';
import { routedPath } from './requests.ts';

/** Issue 13: spawn to the first `/healthz` answer with all the generated projects. */
const STARTUP_LIMIT_MS = 2000;

/**
 * SPEC §14.4: a route of the last of many projects vs the same route with one project loaded,
 * and the start-up time of each (spawn to the first `/healthz` answer, Node's own boot included).
 */
export async function routingSection(context: BenchContext): Promise<Section> {
  const { projects, routesPerProject } = context.settings;
  const many = await routingRow(context, projects, routesPerProject);
  const one = await routingRow(context, 1, routesPerProject);
  return {
    title: '4. routing',
    rows: [many.row, one.row],
    verdicts: [
      throughputAtLeast(many.row, one.row, 0.9),
      figureBelow(`start-up with ${projects} projects`, Math.round(many.startupMs), STARTUP_LIMIT_MS, 'ms', many.row),
    ],
  };
}

async function routingRow(context: BenchContext, count: number, routesPerProject: number): Promise<{ row: Row; startupMs: number }> {
  const label = `${count} project${count === 1 ? '' : 's'} × ${routesPerProject} routes`;
  context.progress(`4. routing: ${label}`);
  const target = generatedProjects(path.join(context.setup.root, 'routing'), count, routesPerProject);
  const service = serviceProcess(context.setup, label, target.projectsDir, 'p000');
  const [measurement, startupMs] = await withChildServer(service, async (server) => {
    return [await measure(routedPath(server.origin, target.path), context.settings, server), server.startupMs] as const;
  });
  const row = { server: `spaceport, ${label}`, measurement, note: `start-up ${Math.round(startupMs)} ms; GET ${target.path}` };
  return { row, startupMs };
}
