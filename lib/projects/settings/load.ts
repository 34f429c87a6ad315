import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Config, ProjectSettingSources } from '../../config/index.ts';
import { bindSettings } from '../../facilities/settings.ts';
import { importDefault } from '../import-default.ts';
import type { RouteProblem } from '../report.ts';
import { checkDeclarations, type CheckedDeclarations } from './declarations.ts';
import { resolveValues } from './values.ts';

const SETTINGS_FILES = ['settings.js', 'settings.mjs', 'settings.ts'];

/** What resolving settings needs: the service's configuration, to bind the values to. */
export interface SettingsContext {
  readonly config: Config;
  readonly sources: ProjectSettingSources;
}

/**
 * Reads a project's `api/settings.{js,mjs,ts}` (optional), checks it, resolves its values and
 * binds them to the service's configuration, so that the route file, imported next, can read
 * them even at import time. Returns every problem found.
 */
export async function loadSettings(project: string, apiDir: string, context: SettingsContext): Promise<readonly RouteProblem[]> {
  const files = SETTINGS_FILES.map((file) => path.join(apiDir, file)).filter((file) => existsSync(file));
  if (files.length > 1) {
    return [{ project, file: apiDir, reason: `more than one settings file (${files.map((file) => path.basename(file)).join(', ')}); keep one` }];
  }
  const [file] = files;
  const declared = file === undefined ? { settings: undefined, problems: [] } : await readDeclarations(project, file);
  if (declared.problems.length > 0) return declared.problems;
  const { values, problems } = resolveValues({ project, file: file ?? apiDir, settings: declared.settings }, context.sources);
  // Bound even when some are wrong: the route file may read the others as it loads, and its
  // own problems belong in the same report.
  if (declared.settings !== undefined) bindSettings(context.config, project, declared.settings, values);
  return problems;
}

async function readDeclarations(project: string, file: string): Promise<CheckedDeclarations> {
  const imported = await importDefault(file);
  if (!imported.ok) return { settings: undefined, problems: [{ project, file, reason: imported.reason }] };
  return checkDeclarations(project, file, imported.exported);
}
