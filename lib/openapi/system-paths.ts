import { BEARER_SCHEME, errorResponses, jsonContent, jsonResponse, rateLimitHeaders, ref, type JsonObject } from './components.ts';

const bearer: readonly JsonObject[] = [{ [BEARER_SCHEME]: [] }];
const tenantParameter = ref('parameters', 'Tenant');
const spaceAnswer = ref('schemas', 'SpaceAnswer');

const health: JsonObject = {
  get: {
    operationId: 'health',
    tags: ['system'],
    summary: 'Database health',
    security: [],
    responses: { '200': jsonResponse('The database answers.', ref('schemas', 'Health')), ...errorResponses(503) },
  },
};

const openApiDocument: JsonObject = {
  get: {
    operationId: 'openApiDocument',
    tags: ['system'],
    summary: 'This document',
    security: [],
    responses: { '200': jsonResponse('The OpenAPI 3.1 document.', { type: 'object' }) },
  },
};

const docsPage: JsonObject = {
  get: {
    operationId: 'docsPage',
    tags: ['system'],
    summary: 'An API reference page (Swagger UI) for this document',
    security: [],
    responses: { '200': { description: 'The HTML page; its scripts and styles come from `/docs/`.', content: { 'text/html': { schema: { type: 'string' } } } } },
  },
};

const login: JsonObject = {
  post: {
    operationId: 'login',
    tags: ['auth'],
    summary: 'Exchange a username and password for a system JWT',
    security: [],
    parameters: [tenantParameter],
    requestBody: { required: true, content: jsonContent(ref('schemas', 'LoginRequest')) },
    responses: {
      '200': jsonResponse('Logged in.', ref('schemas', 'LoginResponse'), rateLimitHeaders),
      ...errorResponses(400, 401, 413, 429, 503),
    },
  },
};

const spacesFeatureNote = 'Answers 404 `{error: "spaces feature is disabled"}` while `spaces.enabled` is false.';

const spaceCollection: JsonObject = {
  parameters: [tenantParameter],
  get: {
    operationId: 'listSpaces',
    tags: ['spaces'],
    summary: 'The spaces visible to the caller, sorted by name in byte order',
    description: spacesFeatureNote,
    security: bearer,
    responses: { '200': jsonResponse('The visible spaces.', ref('schemas', 'SpaceList')), ...errorResponses(400, 401, 404, 503) },
  },
  post: {
    operationId: 'createSpace',
    tags: ['spaces'],
    summary: 'Create a space (admin)',
    description: spacesFeatureNote,
    security: bearer,
    requestBody: { required: true, content: jsonContent(ref('schemas', 'SpaceCreate')) },
    responses: {
      '201': jsonResponse('Created.', spaceAnswer, {
        Location: { schema: { type: 'string' }, description: '`/spaces/<name>`, the name percent-encoded.' },
      }),
      ...errorResponses(400, 401, 403, 404, 409, 413, 503),
    },
  },
};

const spaceItem: JsonObject = {
  parameters: [tenantParameter, ref('parameters', 'SpaceName')],
  get: {
    operationId: 'getSpace',
    tags: ['spaces'],
    summary: 'One space, when visible to the caller',
    description: spacesFeatureNote,
    security: bearer,
    responses: { '200': jsonResponse('The space.', spaceAnswer), ...errorResponses(400, 401, 404, 503) },
  },
  put: {
    operationId: 'replaceSpaceSchemas',
    tags: ['spaces'],
    summary: "Replace a space's schema list (admin)",
    description: spacesFeatureNote,
    security: bearer,
    requestBody: { required: true, content: jsonContent(ref('schemas', 'SpaceReplace')) },
    responses: { '200': jsonResponse('The updated space.', spaceAnswer), ...errorResponses(400, 401, 403, 404, 413, 503) },
  },
  delete: {
    operationId: 'deleteSpace',
    tags: ['spaces'],
    summary: 'Delete a space (admin)',
    description: spacesFeatureNote,
    security: bearer,
    responses: { '200': jsonResponse('The deleted space.', spaceAnswer), ...errorResponses(400, 401, 403, 404, 503) },
  },
};

/** `/healthz`, `/openapi.json`, `/docs`, `/auth/login` and `/spaces` (SPEC §12). */
export const systemPaths: JsonObject = {
  '/healthz': health,
  '/openapi.json': openApiDocument,
  '/docs': docsPage,
  '/auth/login': login,
  '/spaces': spaceCollection,
  '/spaces/{name}': spaceItem,
};
