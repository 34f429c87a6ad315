import createError from 'http-errors';
import type { Context, Middleware } from 'koa';
import { fieldName, type SchemaCheck } from './schema-check.ts';
import type { CompiledRouteSchema, RequestPart } from './schemas.ts';

/**
 * The step that checks `parts` of the request against the route's declared schemas, or none
 * when it declares none of them. It checks what `readPart` gives, what the handler will read
 * (for a project route `req.params`, `req.query`, `req.body`, after a custom auth's changes).
 */
export function schemaCheckStep(
  schema: CompiledRouteSchema | undefined,
  parts: readonly RequestPart[],
  readPart: (ctx: Context, part: RequestPart) => unknown,
): Middleware[] {
  const checks = parts.flatMap((part) => {
    const check = schema?.checks[part];
    return check === undefined ? [] : [{ part, check }];
  });
  if (checks.length === 0) return [];
  const step: Middleware = async (ctx, next) => {
    for (const { part, check } of checks) await checkPart(part, check, readPart(ctx, part));
    await next();
  };
  return [step];
}

/** Resolves when `value` conforms; otherwise 400 `{error}` naming the first field at fault: `body.amount: must be a number`. */
export async function checkPart(part: RequestPart, check: SchemaCheck, value: unknown): Promise<void> {
  const violation = await check(value);
  if (violation !== undefined) throw createError(400, `${fieldName(part, violation.path)}: ${violation.message}`);
}
