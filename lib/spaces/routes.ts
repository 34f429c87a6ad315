import createError from 'http-errors';
import type { Context } from 'koa';
import { paramsOf } from '../routes/router.ts';
import { checkedBody, operation, serviceSchema, serviceTraits, type ServiceAreaDeclaration, type ServiceHandler, type ServiceRoute } from '../routes/service-area.ts';
import type { Runtime } from '../core/runtime.ts';
import { admin, callerAccess, callerRoute, requireAdmin } from './caller.ts';
import { allowedVersions, etagOf, noneMatchHolds } from './etag.ts';
import { deleteSpace, findVisibleSpace, insertSpace, listVisibleSpaces, replaceSpaceSchemas, spaceHistory, StaleVersion, type AllowedVersions, type StoredSpace } from './store.ts';
import { listTrashedSpaces, restoreSpace } from './trash.ts';
import {
  asksForTrash,
  createSpaceBody,
  historyAnswer,
  historyPageOf,
  historyQuery,
  isSpaceName,
  listQuery,
  replaceSpaceBody,
  spaceAnswer,
  spaceList,
  type SpaceCreateBody,
  type SpaceReplaceBody,
} from './validation.ts';

const FEATURE_NOTE = 'Answers 404 `{error: "spaces feature is disabled"}` while `spaces.enabled` is false.';
const adminForTrash: ServiceHandler = () => (ctx, next) => (asksForTrash(ctx.query) ? requireAdmin(ctx, next) : next());
const trashDaysOf = (runtime: Runtime): number => runtime.config.spaces.trashDays;
const ETAG_HEADER = { ETag: { schema: { type: 'string' }, description: "The space's strong validator, for `If-Match` and `If-None-Match`." } };
const IF_MATCH_NOTE = 'With `If-Match` (one or more ETags, or `*`), a space whose ETag is none of them answers 412 and is not changed.';

const spaceRoute = (...[at, guard, route]: Parameters<typeof callerRoute>): ServiceRoute => callerRoute(at, guard, { ...route, tags: ['spaces'] });

/** SPEC §6, checked in its order: tenant, switch, authentication, role (guards), body (schema), then handlers. */
const spaceRoutes: readonly ServiceRoute[] = [
  spaceRoute('GET /spaces', adminForTrash, {
    handler: ({ runtime }) => listSpaces(trashDaysOf(runtime)),
    schema: serviceSchema({ query: listQuery, responses: { 200: spaceList } }),
    ...operation('listSpaces', 'The spaces visible to the caller, sorted by name in byte order; with `?trashed=true`, the trash (admin)', `${FEATURE_NOTE} \`?trashed=true\` lists the spaces in the trash instead, each with \`deletedAt\` (admins only).`),
    errors: [403],
  }),
  spaceRoute('GET /spaces/:name', undefined, {
    handler: () => showSpace,
    schema: serviceSchema({ responses: { 200: spaceAnswer } }),
    ...operation('getSpace', 'One space, when visible to the caller', `${FEATURE_NOTE} With \`If-None-Match\` naming its ETag (or \`*\`), answers 304 without a body.`),
    errors: [304],
    answerHeaders: { 200: ETAG_HEADER },
  }),
  spaceRoute('POST /spaces', admin, {
    handler: () => createSpace,
    schema: serviceSchema({ body: createSpaceBody, responses: { 201: spaceAnswer } }),
    ...operation('createSpace', 'Create a space (admin)', FEATURE_NOTE),
    errors: [403, 409],
    answerHeaders: { 201: { Location: { schema: { type: 'string' }, description: '`/spaces/<name>`, the name percent-encoded.' }, ...ETAG_HEADER } },
  }),
  spaceRoute('PUT /spaces/:name', admin, {
    handler: () => replaceSchemas,
    schema: serviceSchema({ body: replaceSpaceBody, responses: { 200: spaceAnswer } }),
    ...operation('replaceSpaceSchemas', "Replace a space's schema list (admin)", `${FEATURE_NOTE} ${IF_MATCH_NOTE}`),
    errors: [403, 412],
    answerHeaders: { 200: ETAG_HEADER },
  }),
  spaceRoute('DELETE /spaces/:name', admin, {
    handler: ({ runtime }) => removeSpace(trashDaysOf(runtime)),
    schema: serviceSchema({ responses: { 200: spaceAnswer } }),
    ...operation('deleteSpace', 'Move a space to the trash (admin)', `${FEATURE_NOTE} ${IF_MATCH_NOTE} The space stays restorable for \`spaces.trashDays\` days (0: deleted at once), invisible to every other call; answers it as it was.`),
    errors: [403, 412],
    answerHeaders: { 200: ETAG_HEADER },
  }),
  spaceRoute('GET /spaces/:name/history', admin, {
    handler: () => showHistory,
    schema: serviceSchema({ query: historyQuery, responses: { 200: historyAnswer } }),
    ...operation('getSpaceHistory', "A space's changes, newest first (admin)", `${FEATURE_NOTE} Kept after a delete; 404 only for a name that never existed in the tenant. \`?limit\` (1-1000, default 100) and \`?before=<at>\` page through it; a page also stops before the event that would take its schema lists past 20 000 names (one event at least), so it may hold fewer than \`limit\` while \`total\` says more are left.`),
    errors: [403],
  }),
  spaceRoute('POST /spaces/:name/restore', admin, {
    handler: ({ runtime }) => restoreFromTrash(trashDaysOf(runtime)),
    schema: serviceSchema({ responses: { 200: spaceAnswer } }),
    ...operation('restoreSpace', 'Bring a space back from the trash as it was (admin)', `${FEATURE_NOTE} 404 when the name is not in the trash, 409 when a live space has it.`),
    errors: [403, 409],
    answerHeaders: { 200: ETAG_HEADER },
  }),
];

/** `/spaces`, behind the tenant step and the `spaces.enabled` switch. */
export const spacesArea: ServiceAreaDeclaration = {
  segments: ['spaces'],
  traits: serviceTraits({ tenant: true, switchable: true }),
  routes: spaceRoutes,
  crossOrigin: true,
  switchedOff: (config) => (config.spaces.enabled ? undefined : 'spaces feature is disabled'),
};

function listSpaces(trashDays: number) {
  return async (ctx: Context): Promise<void> => {
    const spaces = asksForTrash(ctx.query) ? await listTrashedSpaces(trashDays) : await listVisibleSpaces(callerAccess(ctx));
    ctx.body = { success: true, data: spaces, total: spaces.length };
  };
}

async function showSpace(ctx: Context): Promise<void> {
  const name = spaceNameParameter(ctx);
  const stored = name === undefined ? undefined : await findVisibleSpace(name, callerAccess(ctx));
  answerSpace(ctx, stored);
  if (noneMatchHolds(ctx.get('If-None-Match') || undefined, ctx.response.get('ETag'))) {
    ctx.status = 304;
    ctx.body = null;
  }
}

async function createSpace(ctx: Context): Promise<void> {
  const { name, schemas = [] } = checkedBody<SpaceCreateBody>(ctx);
  const stored = await insertSpace({ name, schemas });
  if (stored === undefined) throw createError(409, 'a space with this name already exists');
  ctx.set('Location', `/spaces/${encodeURIComponent(stored.space.name)}`);
  answerSpace(ctx, stored);
  ctx.status = 201;
}

async function replaceSchemas(ctx: Context): Promise<void> {
  const { name: named, schemas } = checkedBody<SpaceReplaceBody>(ctx);
  if (named !== undefined && named !== paramsOf(ctx).name) throw createError(400, 'name cannot be changed (spaces are not renamed)');
  const name = spaceNameParameter(ctx);
  answerSpace(ctx, name === undefined ? undefined : await unlessStale(replaceSpaceSchemas(name, schemas, ifMatch(ctx))));
}

function removeSpace(trashDays: number) {
  return async (ctx: Context): Promise<void> => {
    const name = spaceNameParameter(ctx);
    answerSpace(ctx, name === undefined ? undefined : await unlessStale(deleteSpace(name, trashDays, ifMatch(ctx))));
  };
}

/** 409 when a live space has the name: a create came first, and the trashed copy is gone (SPEC §6.7). */
function restoreFromTrash(trashDays: number) {
  return async (ctx: Context): Promise<void> => {
    const name = spaceNameParameter(ctx);
    const outcome = name === undefined ? undefined : await restoreSpace(name, trashDays);
    if (outcome?.restored !== undefined) return answerSpace(ctx, outcome.restored);
    if (outcome?.live === true) throw createError(409, 'a live space has this name; only a deleted space can be restored');
    throw createError(404, 'no space of this name is in the trash (GET /spaces?trashed=true lists it)');
  };
}

async function showHistory(ctx: Context): Promise<void> {
  const name = spaceNameParameter(ctx);
  const page = name === undefined ? undefined : await spaceHistory(name, historyPageOf(ctx.query));
  if (page === undefined) throw createError(404, 'space not found');
  ctx.body = { success: true, data: page.events, total: page.total };
}

/** An `If-Match` sent empty is a list of no ETags (a client's unread one), which nothing matches: only an absent header writes unconditionally. */
function ifMatch(ctx: Context): AllowedVersions {
  return allowedVersions(ctx.headers['if-match']);
}

/** A write refused by `If-Match` is 412 (SPEC §6.5). */
async function unlessStale(writing: Promise<StoredSpace | undefined>): Promise<StoredSpace | undefined> {
  try {
    return await writing;
  } catch (error) {
    if (error instanceof StaleVersion) throw createError(412, 'the space has changed since the ETag given in If-Match');
    throw error;
  }
}

/** The `:name` of the URL when it could name a space at all; no query is made for anything else. */
function spaceNameParameter(ctx: Context): string | undefined {
  const name = paramsOf(ctx).name;
  return typeof name === 'string' && isSpaceName(name) ? name : undefined;
}

function answerSpace(ctx: Context, stored: StoredSpace | undefined): void {
  if (stored === undefined) throw createError(404, 'space not found');
  ctx.set('ETag', etagOf(stored, callerAccess(ctx)));
  ctx.body = { success: true, data: stored.space };
}
