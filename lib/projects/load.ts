import { pathToFileURL } from 'node:url';
import { resolveFacilitiesFromAnywhere } from '../facilities/resolution.ts';
import type { ProjectDefinition } from './definition.ts';
import { discoverProjects } from './discovery.ts';
import { describeLoadError } from './load-error.ts';
import type { RouteProblem } from './report.ts';
import { validateRoutes } from './validation.ts';

export interface ProjectScan {
  /** Projects without problems, sorted by name. */
  readonly projects: readonly ProjectDefinition[];
  /** Every problem of every project, in the order the report prints them. */
  readonly problems: readonly RouteProblem[];
}

/** Discovers, imports and validates every project under `projectsDir`, reporting all problems. */
export async function scanProjects(projectsDir: string): Promise<ProjectScan> {
  resolveFacilitiesFromAnywhere();
  const discovery = discoverProjects(projectsDir);
  const loaded = await Promise.all(
    discovery.folders.map(async ({ name, file }) => {
      const imported = await importRouteFile(file);
      if (!imported.ok) return { project: undefined, problems: [{ project: name, file, reason: imported.reason }] };
      const { routes, problems } = validateRoutes(name, file, imported.exported);
      return { project: problems.length === 0 ? Object.freeze({ name, file, routes }) : undefined, problems };
    }),
  );
  return {
    projects: loaded.flatMap(({ project }) => (project ? [project] : [])),
    problems: [...discovery.problems, ...loaded.flatMap(({ problems }) => problems)],
  };
}

type Imported = { ok: true; exported: unknown } | { ok: false; reason: string };

async function importRouteFile(file: string): Promise<Imported> {
  try {
    const namespace = (await import(pathToFileURL(file).href)) as { default?: unknown };
    return { ok: true, exported: namespace.default };
  } catch (error) {
    return { ok: false, reason: `does not load: ${describeLoadError(error, file)}` };
  }
}
