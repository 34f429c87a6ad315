import pino from 'pino';
import { loadConfig } from '../config/index.ts';
import { serveFacilitiesOutsideRequests } from '../facilities/current.ts';
import { BoundProjectSettings } from '../facilities/settings.ts';
import { createLogger } from '../core/logger.ts';
import { readCatalog } from '../projects/catalog.ts';
import { routeTable } from '../projects/route-table.ts';
import { displayPath, formatProblem, ProjectLoadError } from '../projects/report.ts';
import type { MountedRoute } from '../projects/types.ts';
import type { CommandTable } from './command.ts';

const HEADINGS = ['METHOD', 'URL', 'DEFAULT URL', 'AUTH', 'PROJECT', 'FILE'];

/** `make routes`: the route table of PROJECTS_DIR, as the service would mount it (SPEC §8.2). */
export const routeCommands: CommandTable = {
  routes: async () => {
    const { config, secrets } = loadConfig();
    const bound = new BoundProjectSettings();
    serveFacilitiesOutsideRequests({ config, projectSettings: bound });
    const logger = createLogger(process.env.LOG_LEVEL ?? 'warn', pino.destination(2));
    try {
      const catalog = await readCatalog(config, { sources: secrets.projectSettings, bound }, logger);
      const routes = routeTable(catalog.projects, catalog.defaultProject);
      return routes.length === 0 ? `no project routes in ${config.projectsDir}` : formatTable(routes);
    } catch (error) {
      if (!(error instanceof ProjectLoadError)) throw error;
      process.stderr.write(`${error.problems.map(formatProblem).join('\n')}\n`);
      throw new Error(`${error.problems.length} problem(s) in the project routes, listed above`);
    }
  },
};

function formatTable(routes: readonly MountedRoute[]): string {
  const rows = routes.map((route) => [route.method, route.urls[0] ?? '', route.urls[1] ?? '-', route.auth, route.project, displayPath(route.file)]);
  const widths = HEADINGS.map((heading, column) => Math.max(heading.length, ...rows.map((row) => row[column].length)));
  const render = (row: readonly string[]) => row.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd();
  return [HEADINGS, ...rows].map(render).join('\n');
}
