import createError from 'http-errors';
import type { Context } from 'koa';
import { paramsOf } from '../routes/router.ts';
import { checkedBody, serviceSchema, serviceTraits, type ServiceAreaDeclaration, type ServiceHandler, type ServiceRoute } from '../routes/service-area.ts';
import { callerAccess, loadCallerAccess, requireAdmin } from './caller.ts';
import { deleteSpace, findVisibleSpace, insertSpace, listVisibleSpaces, replaceSpaceSchemas, type Space } from './store.ts';
import { createSpaceBody, isSpaceName, replaceSpaceBody, spaceAnswer, spaceList, type SpaceCreateBody, type SpaceReplaceBody } from './validation.ts';

const FEATURE_NOTE = 'Answers 404 `{error: "spaces feature is disabled"}` while `spaces.enabled` is false.';
const tags = ['spaces'];
const loadCaller: ServiceHandler = ({ runtime }) => loadCallerAccess(runtime);
const admin: ServiceHandler = () => requireAdmin;

/**
 * The `/spaces` API (SPEC §6). Checks run in the spec's order: tenant, the feature switch,
 * authentication, role (guards), body (schema), then existence or conflict (handlers).
 */
const spaceRoutes: readonly ServiceRoute[] = [
  {
    method: 'GET',
    path: '/spaces',
    auth: 'system',
    guards: [loadCaller],
    handler: () => listSpaces,
    schema: serviceSchema({ responses: { 200: spaceList } }),
    operationId: 'listSpaces',
    summary: 'The spaces visible to the caller, sorted by name in byte order',
    description: FEATURE_NOTE,
    tags,
  },
  {
    method: 'GET',
    path: '/spaces/:name',
    auth: 'system',
    guards: [loadCaller],
    handler: () => showSpace,
    schema: serviceSchema({ responses: { 200: spaceAnswer } }),
    operationId: 'getSpace',
    summary: 'One space, when visible to the caller',
    description: FEATURE_NOTE,
    tags,
  },
  {
    method: 'POST',
    path: '/spaces',
    auth: 'system',
    guards: [loadCaller, admin],
    handler: () => createSpace,
    schema: serviceSchema({ body: createSpaceBody, responses: { 201: spaceAnswer } }),
    operationId: 'createSpace',
    summary: 'Create a space (admin)',
    description: FEATURE_NOTE,
    tags,
    errors: [403, 409],
    answerHeaders: { 201: { Location: { schema: { type: 'string' }, description: '`/spaces/<name>`, the name percent-encoded.' } } },
  },
  {
    method: 'PUT',
    path: '/spaces/:name',
    auth: 'system',
    guards: [loadCaller, admin],
    handler: () => replaceSchemas,
    schema: serviceSchema({ body: replaceSpaceBody, responses: { 200: spaceAnswer } }),
    operationId: 'replaceSpaceSchemas',
    summary: "Replace a space's schema list (admin)",
    description: FEATURE_NOTE,
    tags,
    errors: [403],
  },
  {
    method: 'DELETE',
    path: '/spaces/:name',
    auth: 'system',
    guards: [loadCaller, admin],
    handler: () => removeSpace,
    schema: serviceSchema({ responses: { 200: spaceAnswer } }),
    operationId: 'deleteSpace',
    summary: 'Delete a space (admin)',
    description: FEATURE_NOTE,
    tags,
    errors: [403],
  },
];

/** `/spaces`, behind the tenant step and the `spaces.enabled` switch. */
export const spacesArea: ServiceAreaDeclaration = {
  segments: ['spaces'],
  traits: serviceTraits({ tenant: true, switchable: true }),
  routes: spaceRoutes,
  crossOrigin: true,
  switchedOff: (config) => (config.spaces.enabled ? undefined : 'spaces feature is disabled'),
};

async function listSpaces(ctx: Context): Promise<void> {
  const spaces = await listVisibleSpaces(callerAccess(ctx));
  ctx.body = { success: true, data: spaces, total: spaces.length };
}

async function showSpace(ctx: Context): Promise<void> {
  const name = spaceNameParameter(ctx);
  const space = name === undefined ? undefined : await findVisibleSpace(name, callerAccess(ctx));
  answerSpace(ctx, space);
}

async function createSpace(ctx: Context): Promise<void> {
  const { name, schemas = [] } = checkedBody<SpaceCreateBody>(ctx);
  const space = await insertSpace({ name, schemas });
  if (space === undefined) throw createError(409, 'a space with this name already exists');
  ctx.status = 201;
  ctx.set('Location', `/spaces/${encodeURIComponent(space.name)}`);
  ctx.body = { success: true, data: space };
}

async function replaceSchemas(ctx: Context): Promise<void> {
  const { name: named, schemas } = checkedBody<SpaceReplaceBody>(ctx);
  if (named !== undefined && named !== paramsOf(ctx).name) throw createError(400, 'name cannot be changed (spaces are not renamed)');
  const name = spaceNameParameter(ctx);
  answerSpace(ctx, name === undefined ? undefined : await replaceSpaceSchemas(name, schemas));
}

async function removeSpace(ctx: Context): Promise<void> {
  const name = spaceNameParameter(ctx);
  answerSpace(ctx, name === undefined ? undefined : await deleteSpace(name));
}

/** The `:name` of the URL when it could name a space at all; no query is made for anything else. */
function spaceNameParameter(ctx: Context): string | undefined {
  const name = paramsOf(ctx).name;
  return typeof name === 'string' && isSpaceName(name) ? name : undefined;
}

function answerSpace(ctx: Context, space: Space | undefined): void {
  if (space === undefined) throw createError(404, 'space not found');
  ctx.body = { success: true, data: space };
}
