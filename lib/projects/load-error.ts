import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { displayPath } from './problems.ts';

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

/**
 * Why a route file does not load: the error's first line, then the file of the project and the
 * line it came from (the route file itself or a module it imports), where that can be known.
 */
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
 * A syntax error found while compiling carries no location: Node keeps it for its own report of
 * an uncaught error. A child process that imports the route file the same way prints that report.
 */
function syntaxErrorAt(routeFile: string): Location | undefined {
  const script = `await import(${JSON.stringify(pathToFileURL(routeFile).href)});`;
  const child = spawnSync(process.execPath, ['--import', RESOLVE_FACILITIES, '--input-type=module', '--eval', script], {
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
