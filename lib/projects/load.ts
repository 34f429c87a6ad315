import path from 'node:path';
import { resolveFacilitiesFromAnywhere } from '../facilities/resolution.ts';
import type { ProjectDefinition } from './definition.ts';
import { discoverProjects, type ProjectFolder } from './discovery.ts';
import { importDefault } from './import-default.ts';
import type { RouteProblem } from './problems.ts';
import { loadSettings, type SettingsContext } from './settings/load.ts';
import { unknownSections } from './settings/sections.ts';
import { validateRoutes } from './route-file.ts';

export interface ProjectScan {
  /** Projects without problems, sorted by name. */
  readonly projects: readonly ProjectDefinition[];
  /** Every problem of every project, in the order the report prints them. */
  readonly problems: readonly RouteProblem[];
}

/**
 * Discovers every project under `projectsDir`, loads its settings (SPEC §8.7), then imports and
 * validates its routes, reporting all problems.
 */
export async function scanProjects(projectsDir: string, settings: SettingsContext): Promise<ProjectScan> {
  resolveFacilitiesFromAnywhere();
  const discovery = discoverProjects(projectsDir);
  const names = new Set([...discovery.folders.map(({ name }) => name), ...discovery.problems.map(({ project }) => project)]);
  const settingsProblems = await loadSettings(discovery.folders.map(({ name, file }) => ({ project: name, apiDir: path.dirname(file) })), settings);
  const loaded = await Promise.all(discovery.folders.map((folder) => loadProject(folder, settingsProblems.get(folder.name) ?? [])));
  return {
    projects: loaded.flatMap(({ project }) => (project ? [project] : [])),
    problems: [...discovery.problems, ...unknownSections(settings.sources, names, projectsDir), ...loaded.flatMap(({ problems }) => problems)],
  };
}

async function loadProject({ name, file }: ProjectFolder, settingsProblems: readonly RouteProblem[]): Promise<{ project?: ProjectDefinition; problems: readonly RouteProblem[] }> {
  const imported = await importDefault(file);
  if (!imported.ok) return { problems: [...settingsProblems, { project: name, file, reason: imported.reason }] };
  const { routes, problems } = validateRoutes(name, file, imported.exported);
  const all = [...settingsProblems, ...problems];
  return { project: all.length === 0 ? Object.freeze({ name, file, routes }) : undefined, problems: all };
}
