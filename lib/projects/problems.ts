import path from 'node:path';

/** One thing wrong with a project, named the way the start-up report prints it (SPEC §8.1). */
export interface RouteProblem {
  /** The project folder's name, so `projects.onError: "skip"` knows what to leave out. */
  readonly project: string;
  /** The route file, the folder when the problem is not inside one file, or a setting's key. */
  readonly file: string;
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
  const where = displayPath(problem.file);
  if (problem.route === undefined) return `${where}: ${problem.reason}`;
  const { index, method, path: routePath } = problem.route;
  return `${where} #${index} ${describe(method, '(no method)')} ${describe(routePath, '(no path)')}: ${problem.reason}`;
}

/** Paths inside the working directory print relative to it; others in full; a setting as named. */
export function displayPath(file: string): string {
  if (!path.isAbsolute(file)) return file;
  const relative = path.relative(process.cwd(), file);
  return relative === '' || relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}

function describe(value: unknown, absent: string): string {
  if (value === undefined) return absent;
  return typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
}

/** `string`, `array`, `null`, ... for messages such as "must be a boolean (got string)". */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}
