import createError from 'http-errors';
import type { Middleware } from 'koa';
import { exchangeFor } from '../bridge/exchange.ts';
import { fieldName } from './schema-check.ts';
import type { RequestPart, RouteSchema } from './schemas.ts';

/**
 * The step that checks `parts` of the request against the route's declared schemas (SPEC §8.1),
 * or none when it declares none of them. It reads what the handler will read (`req.params`,
 * `req.query`, `req.body`, after a custom auth's changes) and answers 400 `{error}` naming the
 * first field at fault: `body.amount: must be a number`.
 */
export function schemaCheckStep(schema: RouteSchema | undefined, parts: readonly RequestPart[]): Middleware[] {
  const checks = parts.flatMap((part) => {
    const check = schema?.checks[part];
    return check === undefined ? [] : [{ part, check }];
  });
  if (checks.length === 0) return [];
  const step: Middleware = async (ctx, next) => {
    const { req } = exchangeFor(ctx);
    for (const { part, check } of checks) {
      const violation = await check(req[part]);
      if (violation !== undefined) throw createError(400, `${fieldName(part, violation.path)}: ${violation.message}`);
    }
    await next();
  };
  return [step];
}
