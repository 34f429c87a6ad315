import type { Config } from '../config/index.ts';
import type { Logger } from '../core/logger.ts';
import type { ProjectDefinition } from './definition.ts';
import { scanProjects } from './load.ts';
import { formatProblem, ProjectLoadError, type RouteProblem } from './report.ts';
import type { SettingsContext } from './settings/load.ts';

/** The projects to mount and which one answers under `/api/project`. */
export interface ProjectCatalog {
  readonly projects: readonly ProjectDefinition[];
  readonly defaultProject: string | undefined;
}

/**
 * Scans `config.projectsDir` and applies `projects.onError` and `projects.default` (SPEC §3,
 * §8.1): "fail" throws one report of every problem; "skip" leaves the faulty projects out and
 * logs why. A problem of the configuration itself (a `projects.default` naming no loaded
 * project, a section naming no project) is a start-up error either way.
 */
export async function readCatalog(config: Config, settings: SettingsContext, logger: Logger): Promise<ProjectCatalog> {
  const scan = await scanProjects(config.projectsDir, settings);
  const problems = [...scan.problems];
  const defaultProject = chooseDefault(config, scan.projects, problems);
  if (problems.length > 0 && (config.projects.onError === 'fail' || problems.some(isConfigProblem))) {
    throw new ProjectLoadError(problems);
  }
  logSkipped(problems, logger);
  if (defaultProject === undefined && scan.projects.length > 1) {
    logger.warn({ projects: scan.projects.map(({ name }) => name) }, 'several projects and no projects.default: /api/project is not mounted');
  }
  const routes = scan.projects.reduce((sum, project) => sum + project.routes.length, 0);
  logger.info({ projectsDir: config.projectsDir, projects: scan.projects.length, routes }, 'project routes loaded');
  return { projects: scan.projects, defaultProject };
}

const CONFIG_KEY = 'projects.default';

function chooseDefault(config: Config, projects: readonly ProjectDefinition[], problems: RouteProblem[]): string | undefined {
  const named = config.projects.default;
  if (named === undefined) return projects.length === 1 ? projects[0].name : undefined;
  if (projects.some(({ name }) => name === named)) return named;
  problems.push({ project: '', file: CONFIG_KEY, reason: `names "${named}", which is not a loaded project` });
  return undefined;
}

/** One that belongs to no project, so leaving projects out cannot fix it. */
function isConfigProblem(problem: RouteProblem): boolean {
  return problem.project === '';
}

function logSkipped(problems: readonly RouteProblem[], logger: Logger): void {
  for (const project of new Set(problems.map((problem) => problem.project))) {
    const reasons = problems.filter((problem) => problem.project === project).map(formatProblem);
    logger.warn({ project, problems: reasons }, `project "${project}" skipped: its routes are invalid`);
  }
}
