import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Where a problem lies: a file (or project folder), an expert configuration key, or a secret's variable. */
export type ProblemSource = { readonly file: string } | { readonly configKey: string } | { readonly environmentVariable: string };

/** One thing wrong with a project, named the way the start-up report prints it (SPEC §8.1). */
export interface RouteProblem {
  /** The project folder's name, so `projects.onError: "skip"` knows what to leave out. */
  readonly project: string;
  readonly source: ProblemSource;
  /** Present when the problem belongs to one route of the file. */
  readonly route?: { readonly index: number; readonly method: unknown; readonly path: unknown };
  readonly reason: string;
}

/** Start-up stops: `message` is the whole report, one problem a line. */
export class ProjectLoadError extends Error {
  override name = 'ProjectLoadError';
  readonly problems: readonly RouteProblem[];

  constructor(problems: readonly RouteProblem[]) {
    super(formatReport(problems));
    this.problems = problems;
  }
}

export function formatReport(problems: readonly RouteProblem[]): string {
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  return [`invalid project routes (${count}):`, ...problems.map((problem) => `  ${formatProblem(problem)}`)].join('\n');
}

/** `projects/shop/api/routes.js #2 PATCH /items: method must be one of GET, POST, PUT, DELETE` */
export function formatProblem(problem: RouteProblem): string {
  const where = describeSource(problem.source);
  if (problem.route === undefined) return `${where}: ${problem.reason}`;
  const { index, method, path: routePath } = problem.route;
  return `${where} #${index} ${describe(method, '(no method)')} ${describe(routePath, '(no path)')}: ${problem.reason}`;
}

/** A file as `displayPath` shows it; a configuration key (`shop.pageSize`) or a variable by its name. */
function describeSource(source: ProblemSource): string {
  if ('file' in source) return displayPath(source.file);
  return 'configKey' in source ? source.configKey : source.environmentVariable;
}

/** Paths inside the working directory print relative to it; others in full; a relative one as given. */
export function displayPath(file: string): string {
  if (!path.isAbsolute(file)) return file;
  const relative = path.relative(process.cwd(), file);
  return relative === '' || relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}

function describe(value: unknown, absent: string): string {
  if (value === undefined) return absent;
  return typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
}

const RESOLVE_FACILITIES = new URL('../facilities/register.ts', import.meta.url).href;
/** A stack frame's file and line: `file:///x/api/handlers/a.js:12:7`. */
const STACK_FRAME = /(file:\/\/[^\s)]+):(\d+):\d+/g;
/** The first line of Node's report of an uncaught syntax error: `file:///x/api/routes.js:3`. */
const REPORTED_LOCATION = /^(file:\/\/\S+|\/\S+):(\d+)$/m;
const CHILD_TIMEOUT_MS = 10_000;

interface Location {
  readonly file: string;
  readonly line: string;
}

/** Why a route file does not load: the error's first line, and the project file and line it came from, if known. */
export function describeLoadError(error: unknown, declaredFile: string): string {
  if (!(error instanceof Error)) return `it threw ${String(error)}`;
  // Node reports a module by its real path: a project linked into PROJECTS_DIR is found there.
  const routeFile = realpathSync(declaredFile);
  const firstLine = error.message.split('\n')[0] ?? '';
  const where = thrownAt(error, routeFile) ?? (error instanceof SyntaxError ? syntaxErrorAt(routeFile) : undefined);
  return `${error.name}: ${firstLine}${where === undefined ? '' : ` (${describeLocation(where, routeFile)})`}`;
}

/** The first frame of the stack that lies in the project's own files (not its node_modules). */
function thrownAt(error: Error, routeFile: string): Location | undefined {
  const projectFolder = projectFolderOf(routeFile);
  for (const [, url, line] of (error.stack ?? '').matchAll(STACK_FRAME)) {
    const file = fileURLToPath(url);
    if (isInside(projectFolder, file) && !file.split(path.sep).includes('node_modules')) return { file, line };
  }
  return undefined;
}

/**
 * A syntax error carries no location: Node keeps it for its report of an uncaught error, which a
 * child process importing the route file the same way prints.
 */
function syntaxErrorAt(routeFile: string): Location | undefined {
  const script = `await import(${JSON.stringify(pathToFileURL(routeFile).href)});`;
  const child = spawnSync(process.execPath, ['--import', RESOLVE_FACILITIES, '--input-type=module', '--eval', script], {
    env: { ...process.env, PROJECTS_DIR: path.dirname(projectFolderOf(routeFile)) },
    encoding: 'utf8',
    timeout: CHILD_TIMEOUT_MS,
  });
  const reported = REPORTED_LOCATION.exec(child.stderr ?? '');
  if (reported === null) return undefined;
  const [, where, line] = reported;
  return { file: where.startsWith('file:') ? fileURLToPath(where) : where, line };
}

/** `line 3` in the route file itself; `api/handlers/a.js line 3` elsewhere in the project. */
function describeLocation({ file, line }: Location, routeFile: string): string {
  if (file === routeFile) return `line ${line}`;
  const projectFolder = projectFolderOf(routeFile);
  const shown = isInside(projectFolder, file) ? path.relative(projectFolder, file) : displayPath(file);
  return `${shown} line ${line}`;
}

/** `<project>/api/routes.js` → `<project>`. */
function projectFolderOf(routeFile: string): string {
  return path.dirname(path.dirname(routeFile));
}

function isInside(folder: string, file: string): boolean {
  const relative = path.relative(folder, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}
