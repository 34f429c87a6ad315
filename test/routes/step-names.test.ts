import test from 'ava';
import { body, check, param, query } from 'express-validator';
import { projectTraits } from '../../lib/projects/mount.ts';
import type { RouteDeclaration } from '../../lib/routes/declaration.ts';
import { listRoutes } from '../../lib/routes/route-table.ts';

// Issue 37, point 6: `make routes` named every express-validator chain `middleware` (the name
// of each chain's function), so a route read `middleware, middleware, rejectInvalid`.
function middlewareNames(middleware: readonly unknown[]): readonly string[] {
  const route = { method: 'POST', path: '/orders', auth: 'system', handler: () => {}, schema: undefined, middleware } as unknown as RouteDeclaration<unknown>;
  const [listed] = listRoutes([route], projectTraits(false), { mounts: ['/api/shop'], project: 'shop' });
  return listed?.middleware ?? [];
}

test("make routes names an express-validator chain by what it checks, other middleware by its function's name", (t) => {
  const rejectInvalid = () => {};
  const steps = [body('amount').isInt(), body(['sku', 'note']).isString(), param('id').isUUID(), query('page').optional().isInt(), check('token').notEmpty(), rejectInvalid, () => {}];
  t.deepEqual(middlewareNames(steps), ['body(amount)', 'body(sku, note)', 'param(id)', 'query(page)', 'check(token)', 'rejectInvalid', 'anonymous']);
});
