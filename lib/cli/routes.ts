import { loadConfig } from '../config/index.ts';
import { withFacilityState } from '../facilities/current.ts';
import { BoundProjectSettings } from '../facilities/settings.ts';
import { createLogger } from '../logger/index.ts';
import { answeringServiceRoutes, switchedOffAreas } from '../app.ts';
import { readCatalog } from '../projects/load.ts';
import { projectRouteTable } from '../projects/mount.ts';
import { displayPath, formatProblem, ProjectLoadError } from '../projects/problems.ts';
import { describeRateLimit, type ListedRoute } from '../routes/route-table.ts';
import type { CommandTable } from './command.ts';
import { indexNames, type IndexDeclaration } from '../documents/index-keys.ts';

const HEADINGS = ['METHOD', 'URL', 'DEFAULT URL', 'AUTH', 'PROJECT', 'FILE', 'MIDDLEWARE'];
const INDEX_HEADINGS = ['INDEX', 'PROJECT', 'COLLECTION', 'FIELDS', 'UNIQUE'];

/**
 * `make routes`: every route the service would answer, its own first, then PROJECTS_DIR's as
 * mounted (SPEC §8.2); an area switched off is named under the table. Then the indexes projects
 * declare, by their names in PostgreSQL. Warnings of the project loading go to stderr.
 */
export const routeCommands: CommandTable = {
  routes: async () => {
    const { config, secrets } = loadConfig();
    const bound = new BoundProjectSettings();
    const logger = createLogger(process.env.LOG_LEVEL ?? 'warn', { write: (line) => process.stderr.write(readableLogLine(line)) });
    try {
      const catalog = await withFacilityState({ config, projectSettings: bound }, () => readCatalog(config, { sources: secrets.projectSettings, bound }, logger));
      const projectRoutes = projectRouteTable(catalog.projects, catalog.defaultProject, config.referer.enabled);
      const footnotes = switchedOffAreas(config).map(({ segments, reason }) => `not listed: the ${segments.map((segment) => `/${segment}`).join(', ')} routes (${reason})`);
      if (projectRoutes.length === 0) footnotes.push(`no project routes in ${config.projectsDir}`);
      const listed = [formatTable([...answeringServiceRoutes(config), ...projectRoutes]), ...footnotes].join('\n');
      const indexes = catalog.projects.flatMap((project) => project.indexes);
      return indexes.length === 0 ? listed : `${listed}\n\n${formatIndexTable(indexes)}`;
    } catch (error) {
      if (!(error instanceof ProjectLoadError)) throw error;
      process.stderr.write(`${error.problems.map(formatProblem).join('\n')}\n`);
      throw new Error(`${error.problems.length} problem(s) in the projects (routes, settings, expert configuration), listed above`);
    }
  },
};

/** A log line of the project loading, as the command's other messages read: `routes: <msg>`, then its problems if any. */
function readableLogLine(line: string): string {
  const { msg, problems } = JSON.parse(line) as { msg?: unknown; problems?: unknown };
  const details = Array.isArray(problems) ? problems.map((problem) => `  ${String(problem)}\n`).join('') : '';
  return `routes: ${String(msg)}\n${details}`;
}

function formatTable(routes: readonly ListedRoute[]): string {
  const rows = routes.map((route) => [
    route.method,
    route.urls[0] ?? '',
    route.urls[1] ?? '-',
    route.ownRateLimit === undefined ? route.auth : `${route.auth}, ${describeRateLimit(route.ownRateLimit)}`,
    route.project ?? '-',
    route.file === undefined ? '-' : displayPath(route.file),
    route.middleware.length === 0 ? '-' : route.middleware.join(', '),
  ]);
  return formatColumns(HEADINGS, rows);
}

/** `doci_shop_tickets_priority_…  shop  tickets  priority:-1, createdAt:1  no`: a unique declaration has two indexes. */
function formatIndexTable(indexes: readonly IndexDeclaration[]): string {
  const rows = indexes.flatMap((declaration) => {
    const names = indexNames(declaration);
    const fields = declaration.fields.map(({ path, direction }) => `${path.join('.')}:${direction}`).join(', ');
    const row = (name: string, unique: string) => [name, declaration.project, declaration.collection, fields, unique];
    return names.unique === undefined ? [row(names.query, 'no')] : [row(names.query, 'yes (queries)'), row(names.unique, 'yes (per tenant)')];
  });
  return formatColumns(INDEX_HEADINGS, rows);
}

function formatColumns(headings: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headings.map((heading, column) => Math.max(heading.length, ...rows.map((row) => row[column].length)));
  const render = (row: readonly string[]) => row.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd();
  return [headings, ...rows].map(render).join('\n');
}
