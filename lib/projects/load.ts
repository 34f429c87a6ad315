import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Config, ProjectSettingSources } from '../config/index.ts';
import { BUILT_IN_SECTIONS } from '../config/schema.ts';
import type { Logger } from '../logger/index.ts';
import type { ProjectSettingValues } from '../facilities/settings.ts';
import { resolveFacilitiesFromAnywhere } from '../facilities/resolution.ts';
import { isDefinedSettings, type ProjectSettings } from '../facilities/settings.ts';
import type { IndexDeclaration } from '../documents/index-keys.ts';
import { describeLoadError, formatProblem, ProjectLoadError, type RouteProblem } from './problems.ts';
import { validateIndexes, type ValidatedIndexes } from './index-file.ts';
import { validateRoutes, type ProjectRoute } from './route-file.ts';
import { checkDeclarations } from './settings/declarations.ts';
import { type DeclaredSecret, resolveValues, secretsOf, sharedVariableProblems, unknownSections } from './settings/values.ts';

const PROJECT_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
/** `/api/project` is the default project's mount, so no project may take that name. */
const RESERVED_NAME = 'project';
/** A project's modules in its `api` folder, each `<name>.{js,mjs,ts}`, by what the report calls them. */
const PROJECT_MODULES = { routes: 'route', settings: 'settings', indexes: 'index' } as const;
const MODULE_EXTENSIONS = ['js', 'mjs', 'ts'];
const DEFAULT_PROJECT_KEY = 'projects.default';

/** A project whose route file loaded and validated. */
export interface ProjectDefinition {
  readonly name: string;
  /** Absolute path of its route file. */
  readonly file: string;
  readonly routes: readonly ProjectRoute[];
  /** The indexes its `api/indexes.{js,mjs,ts}` declares (none without one). */
  readonly indexes: readonly IndexDeclaration[];
}

/** The projects to mount and which one answers under `/api/project`. */
export interface ProjectCatalog {
  readonly projects: readonly ProjectDefinition[];
  readonly defaultProject: string | undefined;
}

/**
 * Scans `config.projectsDir` and applies `projects.onError` and `projects.default` (SPEC §3,
 * §8.1): "fail" throws one report of every problem, "skip" leaves faulty projects out. A problem
 * of the configuration itself (a default or a section naming no project) stops start-up either way.
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

function chooseDefault(config: Config, projects: readonly ProjectDefinition[], problems: RouteProblem[]): string | undefined {
  const named = config.projects.default;
  if (named === undefined) return projects.length === 1 ? projects[0].name : undefined;
  if (projects.some(({ name }) => name === named)) return named;
  problems.push({ project: '', source: { configKey: DEFAULT_PROJECT_KEY }, reason: `names "${named}", which is not a loaded project` });
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

interface ProjectScan {
  /** Projects without problems, sorted by name. */
  readonly projects: readonly ProjectDefinition[];
  /** Every problem of every project, in the order the report prints them. */
  readonly problems: readonly RouteProblem[];
}

/** Settings first (SPEC §8.7): a route file may read them as it loads. */
async function scanProjects(projectsDir: string, settings: SettingsContext): Promise<ProjectScan> {
  resolveFacilitiesFromAnywhere(projectsDir);
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
  if (!imported.ok) return { problems: [...settingsProblems, { project: name, source: { file }, reason: imported.reason }] };
  const { routes, problems } = validateRoutes(name, file, imported.exported);
  const declared = await readIndexes(name, path.dirname(file));
  const all = [...settingsProblems, ...problems, ...declared.problems];
  return { project: all.length === 0 ? Object.freeze({ name, file, routes, indexes: Object.freeze(declared.indexes) }) : undefined, problems: all };
}

/** Optional (SPEC §9.4). */
async function readIndexes(project: string, apiDir: string): Promise<ValidatedIndexes> {
  const file = projectModule(project, apiDir, 'indexes');
  if (typeof file !== 'string') return { indexes: [], problems: file === undefined ? [] : [file] };
  const imported = await importDefault(file);
  if (!imported.ok) return { indexes: [], problems: [{ project, source: { file }, reason: imported.reason }] };
  return validateIndexes(project, file, imported.exported);
}

/** A folder of PROJECTS_DIR with exactly one route file and an acceptable name. */
interface ProjectFolder {
  readonly name: string;
  readonly file: string;
}

interface Discovery {
  readonly folders: readonly ProjectFolder[];
  readonly problems: readonly RouteProblem[];
}

/** Every folder `<projectsDir>/<name>/` holding `api/routes.{js,mjs,ts}` (SPEC §8.1), sorted by name. */
function discoverProjects(projectsDir: string): Discovery {
  const folders: ProjectFolder[] = [];
  const problems: RouteProblem[] = [];
  for (const name of folderNames(projectsDir)) {
    const apiDir = path.join(projectsDir, name, 'api');
    const file = projectModule(name, apiDir, 'routes');
    if (file === undefined) continue;
    const nameProblem = problemWithName(name);
    if (nameProblem !== undefined) problems.push({ project: name, source: { file: path.join(projectsDir, name) }, reason: nameProblem });
    else if (typeof file !== 'string') problems.push(file);
    else folders.push({ name, file });
  }
  return { folders, problems };
}

/** A project's `api/<name>.{js,mjs,ts}`: its path, undefined when none, a problem when several. */
function projectModule(project: string, apiDir: string, name: keyof typeof PROJECT_MODULES): string | RouteProblem | undefined {
  const files = MODULE_EXTENSIONS.map((extension) => path.join(apiDir, `${name}.${extension}`)).filter((file) => existsSync(file));
  if (files.length <= 1) return files[0];
  const reason = `more than one ${PROJECT_MODULES[name]} file (${files.map((file) => path.basename(file)).join(', ')}); keep one`;
  return { project, source: { file: apiDir }, reason };
}

function folderNames(projectsDir: string): string[] {
  if (!existsSync(projectsDir)) return [];
  return readdirSync(projectsDir)
    .filter((name) => isDirectory(path.join(projectsDir, name)))
    .sort();
}

/** Follows symbolic links, so a project linked into PROJECTS_DIR counts. */
function isDirectory(candidate: string): boolean {
  try {
    return statSync(candidate).isDirectory();
  } catch {
    return false;
  }
}

/** Why `name` cannot name a project folder, or undefined when it can. */
export function problemWithName(name: string): string | undefined {
  if (name === RESERVED_NAME) return `project folder name "${name}" is reserved for the default project's mount`;
  if (!PROJECT_NAME.test(name)) return `project folder name "${name}" must match ${PROJECT_NAME.source}`;
  // The expert configuration keeps a project's settings under its name (SPEC §8.7).
  if (BUILT_IN_SECTIONS.has(name)) return `project folder name "${name}" is a section of the expert configuration; choose another`;
  return undefined;
}

/** What resolving settings needs: where values are read from, and the service's values to bind them to. */
export interface SettingsContext {
  readonly sources: ProjectSettingSources;
  readonly bound: ProjectSettingValues;
}

/** A project whose settings are loaded: its name and its `api` folder. */
interface SettingsFolder {
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
 * Reads and checks every project's optional settings file, each alone and together (no two
 * secrets read from one variable), and binds the values of those declared right, so that route
 * files, imported next, read them even at import time. Returns every problem, by project.
 */
async function loadSettings(folders: readonly SettingsFolder[], context: SettingsContext): Promise<ReadonlyMap<string, readonly RouteProblem[]>> {
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
  const file = projectModule(project, apiDir, 'settings');
  if (typeof file !== 'string') return { project, file: apiDir, settings: undefined, secrets: [], problems: file === undefined ? [] : [file] };
  const imported = await importDefault(file);
  if (!imported.ok) return { project, file, settings: undefined, secrets: [], problems: [{ project, source: { file }, reason: imported.reason }] };
  const { settings, problems } = checkDeclarations(project, file, imported.exported);
  const secrets = isDefinedSettings(imported.exported) ? secretsOf(project, file, imported.exported) : [];
  return { project, file, settings, secrets, problems };
}

type Imported = { ok: true; exported: unknown } | { ok: false; reason: string };

/** The default export of a project's module (its route file, its settings file), or why it does not load. */
async function importDefault(file: string): Promise<Imported> {
  try {
    const namespace = (await import(pathToFileURL(file).href)) as { default?: unknown };
    return { ok: true, exported: namespace.default };
  } catch (error) {
    return { ok: false, reason: `does not load: ${describeLoadError(error, file)}` };
  }
}
