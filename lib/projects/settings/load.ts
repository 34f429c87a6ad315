import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ProjectSettingSources } from '../../config/index.ts';
import type { ProjectSettingValues } from '../../core/runtime.ts';
import { isDefinedSettings, type ProjectSettings } from '../../facilities/settings.ts';
import { importDefault } from '../import-default.ts';
import type { RouteProblem } from '../report.ts';
import { checkDeclarations } from './declarations.ts';
import { resolveValues } from './values.ts';
import { type DeclaredSecret, secretsOf, sharedVariableProblems } from './variables.ts';

const SETTINGS_FILES = ['settings.js', 'settings.mjs', 'settings.ts'];

/** What resolving settings needs: where values are read from, and the service's values to bind them to. */
export interface SettingsContext {
  readonly sources: ProjectSettingSources;
  readonly bound: ProjectSettingValues;
}

/** A project whose settings are loaded: its name and its `api` folder. */
export interface SettingsFolder {
  readonly project: string;
  readonly apiDir: string;
}

/** A project's settings file as read and checked, before any value is resolved. */
interface DeclaredSettings {
  readonly project: string;
  /** The settings file, or the `api` folder that has none. */
  readonly file: string;
  /** Undefined when the project declares none, or its declarations are wrong. */
  readonly settings: ProjectSettings | undefined;
  /** Every secret declared, the file's other problems notwithstanding. */
  readonly secrets: readonly DeclaredSecret[];
  readonly problems: readonly RouteProblem[];
}

/**
 * Reads every project's `api/settings.{js,mjs,ts}` (optional), checks them, each alone and
 * together (no two secrets, of one project or two, read from one variable), resolves the values
 * of every project whose declarations are right and binds them to the service's configuration,
 * so that its route file, imported next, can read them even at import time. Returns every
 * problem, by project.
 */
export async function loadSettings(folders: readonly SettingsFolder[], context: SettingsContext): Promise<ReadonlyMap<string, readonly RouteProblem[]>> {
  const declared = await Promise.all(folders.map(({ project, apiDir }) => readSettings(project, apiDir)));
  const shared = sharedVariableProblems(declared.flatMap(({ secrets }) => secrets));
  return new Map(declared.map((each) => [each.project, resolveProject(each, shared.filter(({ project }) => project === each.project), context)]));
}

function resolveProject(declared: DeclaredSettings, shared: readonly RouteProblem[], context: SettingsContext): readonly RouteProblem[] {
  if (declared.problems.length > 0 || shared.length > 0) return [...declared.problems, ...shared];
  const { project, file, settings } = declared;
  const { values, problems } = resolveValues({ project, file, settings }, context.sources);
  // Bound even when some are wrong: the route file may read the others as it loads, and its
  // own problems belong in the same report.
  if (settings !== undefined) context.bound.bind(project, settings, values);
  return problems;
}

async function readSettings(project: string, apiDir: string): Promise<DeclaredSettings> {
  const files = SETTINGS_FILES.map((file) => path.join(apiDir, file)).filter((file) => existsSync(file));
  if (files.length > 1) {
    const reason = `more than one settings file (${files.map((file) => path.basename(file)).join(', ')}); keep one`;
    return { project, file: apiDir, settings: undefined, secrets: [], problems: [{ project, file: apiDir, reason }] };
  }
  const [file] = files;
  if (file === undefined) return { project, file: apiDir, settings: undefined, secrets: [], problems: [] };
  const imported = await importDefault(file);
  if (!imported.ok) return { project, file, settings: undefined, secrets: [], problems: [{ project, file, reason: imported.reason }] };
  const { settings, problems } = checkDeclarations(project, file, imported.exported);
  const secrets = isDefinedSettings(imported.exported) ? secretsOf(project, file, imported.exported) : [];
  return { project, file, settings, secrets, problems };
}
