import Router, { type RouterContext } from '@koa/router';
import createError from 'http-errors';
import type { Context } from 'koa';
import { systemAuthentication } from '../auth/system-auth.ts';
import { jsonBody } from '../core/json-body.ts';
import { routerArea } from '../core/routing.ts';
import type { Runtime } from '../core/runtime.ts';
import { callerAccess, loadCallerAccess, requireAdmin } from './caller.ts';
import { deleteSpace, findVisibleSpace, insertSpace, listVisibleSpaces, replaceSpaceSchemas, type Space } from './store.ts';
import { isSpaceName, parseCreateBody, parseReplaceBody } from './validation.ts';

/**
 * The `/spaces` API (SPEC §6). Checks run in the spec's order: the tenant was resolved before
 * this area; then the feature switch, authentication, role, body, and existence or conflict.
 */
export function spacesArea(runtime: Runtime): (ctx: Context) => Promise<void> | void {
  if (!runtime.config.spaces.enabled) {
    return () => {
      throw createError(404, 'spaces feature is disabled');
    };
  }
  return spacesRouter(runtime);
}

function spacesRouter(runtime: Runtime): (ctx: Context) => Promise<void> {
  const authenticated = [systemAuthentication(runtime), loadCallerAccess(runtime)];
  // The body is read only once the caller is known to be an admin.
  const adminWithBody = [...authenticated, requireAdmin, jsonBody(runtime.config.limits.jsonBytes)];
  const router = new Router();
  router.get('/spaces', ...authenticated, listSpaces);
  router.get('/spaces/:name', ...authenticated, showSpace);
  router.post('/spaces', ...adminWithBody, createSpace);
  router.put('/spaces/:name', ...adminWithBody, replaceSchemas);
  router.delete('/spaces/:name', ...authenticated, requireAdmin, removeSpace);
  return routerArea(router);
}

async function listSpaces(ctx: RouterContext): Promise<void> {
  const spaces = await listVisibleSpaces(callerAccess(ctx));
  ctx.body = { success: true, data: spaces, total: spaces.length };
}

async function showSpace(ctx: RouterContext): Promise<void> {
  const name = spaceNameParameter(ctx);
  const space = name === undefined ? undefined : await findVisibleSpace(name, callerAccess(ctx));
  answerSpace(ctx, space);
}

async function createSpace(ctx: RouterContext): Promise<void> {
  const space = await insertSpace(parseCreateBody(ctx.request.body));
  if (space === undefined) throw createError(409, 'a space with this name already exists');
  ctx.status = 201;
  ctx.set('Location', `/spaces/${encodeURIComponent(space.name)}`);
  ctx.body = { success: true, data: space };
}

async function replaceSchemas(ctx: RouterContext): Promise<void> {
  const schemas = parseReplaceBody(ctx.request.body, ctx.params.name ?? '');
  const name = spaceNameParameter(ctx);
  answerSpace(ctx, name === undefined ? undefined : await replaceSpaceSchemas(name, schemas));
}

async function removeSpace(ctx: RouterContext): Promise<void> {
  const name = spaceNameParameter(ctx);
  answerSpace(ctx, name === undefined ? undefined : await deleteSpace(name));
}

/** The `:name` of the URL when it could name a space at all; no query is made for anything else. */
function spaceNameParameter(ctx: RouterContext): string | undefined {
  const name = ctx.params.name;
  return name !== undefined && isSpaceName(name) ? name : undefined;
}

function answerSpace(ctx: RouterContext, space: Space | undefined): void {
  if (space === undefined) throw createError(404, 'space not found');
  ctx.body = { success: true, data: space };
}
