import type { Context, Middleware } from 'koa';
import { InvalidRequest, type FieldProblem } from '../core/errors.ts';
import { requestState } from '../core/request-state.ts';
import { withFilesChecked } from './file-fields.ts';
import { fieldName, MOST_PROBLEMS, type SchemaCheck } from './schema-check.ts';
import type { CompiledRouteSchema, RequestPart } from './schemas.ts';

/** What the schema steps read of a request: a part, or `files`, the files of a multipart body (`req.files`). */
export type ReadPart = (ctx: Context, part: RequestPart | 'files') => unknown;

declare module '../core/request-state.ts' {
  interface RequestState {
    /** The params and query problems of a request whose body is still to be read and checked (`urlCheckStep`). */
    problemsAwaitingBody?: readonly FieldProblem[] | undefined;
  }
}

/**
 * Checks params and query, before the body is read, as `readPart` gives them (what the handler
 * will read). With a body schema too, their problems wait for the body's, so that one 400 names
 * them all; should the body fail to be read, their 400 answers, as known to be wrong first.
 */
export function urlCheckStep(schema: CompiledRouteSchema | undefined, readPart: ReadPart): Middleware[] {
  const checks = declaredChecks(schema, ['params', 'query']);
  if (checks.length === 0) return [];
  const bodyFollows = schema?.checks.body !== undefined;
  const step: Middleware = async (ctx, next) => {
    const problems = await problemsOf(ctx, checks, readPart);
    if (problems.length === 0) return next();
    if (!bodyFollows) throw new InvalidRequest(problems);
    const state = requestState(ctx);
    state.problemsAwaitingBody = problems;
    try {
      await next();
    } catch (error) {
      // Still waiting: the body step never ran, so this is the body reader's failure.
      if (state.problemsAwaitingBody !== undefined) throw new InvalidRequest(problems);
      throw error;
    }
  };
  return [step];
}

/** Checks the body once read (file fields against the files received), with the params' and query's problems. */
export function bodyCheckStep(schema: CompiledRouteSchema | undefined, readPart: ReadPart): Middleware[] {
  const check = schema?.checks.body;
  if (check === undefined) return [];
  const files = schema?.files;
  const step: Middleware = async (ctx, next) => {
    const state = requestState(ctx);
    const earlier = state.problemsAwaitingBody ?? [];
    state.problemsAwaitingBody = undefined;
    const violations = await check(readPart(ctx, 'body'));
    const bodyViolations = files === undefined ? violations : withFilesChecked(files, violations, readPart(ctx, 'files'));
    const problems = onePerField([...earlier, ...bodyViolations.map(({ path, message }) => ({ path: fieldName('body', path), message }))]);
    if (problems.length > 0) throw new InvalidRequest(problems);
    await next();
  };
  return [step];
}

function declaredChecks(schema: CompiledRouteSchema | undefined, parts: readonly RequestPart[]): Array<{ part: RequestPart; check: SchemaCheck }> {
  return parts.flatMap((part) => {
    const check = schema?.checks[part];
    return check === undefined ? [] : [{ part, check }];
  });
}

async function problemsOf(ctx: Context, checks: ReadonlyArray<{ part: RequestPart; check: SchemaCheck }>, readPart: ReadPart): Promise<FieldProblem[]> {
  const problems: FieldProblem[] = [];
  for (const { part, check } of checks) problems.push(...(await partProblems(part, check, readPart(ctx, part))));
  return onePerField(problems);
}

/** What `check` finds wrong with `value`, one part of a request, each field named from the part: `body.amount`. */
export async function partProblems(part: RequestPart, check: SchemaCheck, value: unknown): Promise<FieldProblem[]> {
  return onePerField((await check(value)).map(({ path, message }) => ({ path: fieldName(part, path), message })));
}

/** A field a validator faults twice (too short and off its pattern) is named once, by its first problem; at most MOST_PROBLEMS of them. */
function onePerField(problems: readonly FieldProblem[]): FieldProblem[] {
  const seen = new Set<string>();
  return problems.filter(({ path }) => !seen.has(path) && seen.add(path)).slice(0, MOST_PROBLEMS);
}
