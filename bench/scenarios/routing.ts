import path from 'node:path';
import { measure } from '../harness/load.ts';
import { withChildServer } from '../harness/processes.ts';
import { generatedProjects } from '../harness/projects.ts';
import { serviceProcess } from '../harness/service.ts';
import type { Row, Section } from '../harness/table.ts';
import { routedPath } from './requests.ts';
import type { BenchContext } from './context.ts';

/**
 * SPEC §14.4: a route of the last of many projects vs the same route with one project loaded,
 * and the start-up time of each (spawn to the first `/healthz` answer, Node's own boot included).
 */
export async function routingSection(context: BenchContext): Promise<Section> {
  const { projects, routesPerProject } = context.settings;
  const many = await routingRow(context, projects, routesPerProject);
  const one = await routingRow(context, 1, routesPerProject);
  return { title: '4. routing', rows: [many, one] };
}

async function routingRow(context: BenchContext, count: number, routesPerProject: number): Promise<Row> {
  const label = `${count} project${count === 1 ? '' : 's'} × ${routesPerProject} routes`;
  context.progress(`4. routing: ${label}`);
  const target = generatedProjects(path.join(context.setup.root, 'routing'), count, routesPerProject);
  const service = serviceProcess(context.setup, label, target.projectsDir, 'p000');
  const [measurement, startupMs] = await withChildServer(service, async (server) => {
    return [await measure(routedPath(server.origin, target.path), context.settings), server.startupMs] as const;
  });
  return { server: `spaceport, ${label}`, measurement, note: `start-up ${Math.round(startupMs)} ms; GET ${target.path}` };
}
