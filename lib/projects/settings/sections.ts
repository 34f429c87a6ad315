import type { ProjectSettingSources } from '../../config/index.ts';
import type { RouteProblem } from '../problems.ts';

/**
 * A section of the expert configuration that is neither built in (those are checked with the
 * configuration) nor named after a project is a mistake: start-up stops, whatever
 * `projects.onError` says, since no project can be left out to fix it.
 */
export function unknownSections(sources: ProjectSettingSources, projects: ReadonlySet<string>, projectsDir: string): RouteProblem[] {
  return Object.keys(sources.sections)
    .filter((name) => !projects.has(name))
    .map((name) => ({ project: '', file: name, reason: `expert configuration: unknown key (neither a built-in section nor a project in ${projectsDir})` }));
}
