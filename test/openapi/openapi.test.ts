import test from 'ava';
import { Validator } from '@seriousme/openapi-schema-validator';
import { buildOpenApiDocument } from '../../lib/openapi/index.ts';
import { projectTraits } from '../../lib/projects/mount.ts';
import { listRoutes, type ListedRoute } from '../../lib/routes/route-table.ts';
import { answeringServiceRoutes } from '../../lib/app.ts';
import { fixtureProjects, startWithProjects } from '../helpers/projects.ts';
import { serviceForFile, type ServiceUnderTest } from '../helpers/service.ts';

/** The parts of an OpenAPI document these tests read (the validator checks the whole). */
type Parameter = {
  readonly $ref?: string;
  readonly name?: string;
  readonly in?: string;
  readonly required?: boolean;
  readonly schema?: unknown;
};
type Operation = {
  readonly security?: unknown;
  readonly summary?: string;
  readonly tags?: readonly string[];
  readonly parameters?: readonly Parameter[];
  readonly description?: string;
  readonly 'x-spaceport-auth'?: string;
  readonly requestBody: { readonly content: Readonly<Record<string, { readonly schema: unknown }>> };
  readonly responses: Readonly<Record<string, Response>>;
};
type Response = {
  readonly $ref?: string;
  readonly description?: string;
  readonly headers: Readonly<Record<string, unknown>>;
  readonly content?: Readonly<Record<string, { readonly schema: unknown }>>;
};
type PathItem = {
  readonly parameters?: readonly Parameter[];
  readonly get: Operation;
  readonly put: Operation;
  readonly post: Operation;
  readonly delete: Operation;
};
type Document = {
  readonly openapi: string;
  readonly paths: Readonly<Record<string, PathItem>>;
  readonly components: {
    readonly securitySchemes: Readonly<Record<string, unknown>>;
    readonly schemas: Readonly<Record<string, { readonly required?: readonly string[]; readonly additionalProperties?: boolean; readonly properties?: unknown }>>;
  };
};

let service: ServiceUnderTest;
serviceForFile({ expert: { spaces: { enabled: true } } }, (started) => {
  service = started;
});

async function validationErrors(document: Document): Promise<unknown> {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document));
  if (!result.valid) return result.errors;
  validator.resolveRefs();
  return undefined;
}

/** Every `{param}` of every path is declared as a required path parameter (the schema cannot check this). */
function undeclaredPathParameters(document: Document): string[] {
  const problems: string[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    const parameters = (item.parameters ?? []).map((parameter) => resolved(document, parameter));
    const declared = new Set(parameters.filter((parameter) => parameter.in === 'path' && parameter.required).map((parameter) => parameter.name));
    for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
      if (!declared.has(name)) problems.push(`${path}: {${name}}`);
    }
  }
  return problems;
}

/** A parameter, or the `components` entry its `$ref` (`#/components/...`) points at. */
function resolved(document: Document, parameter: Parameter): Parameter {
  if (typeof parameter.$ref !== 'string') return parameter;
  const target = parameter.$ref
    .slice(2)
    .split('/')
    .reduce<unknown>((parent, key) => (parent as Readonly<Record<string, unknown>>)[key], document);
  return target as Parameter;
}

type Synthetic = Pick<ListedRoute, 'method' | 'path' | 'auth'> & { urls?: readonly string[]; schemas?: NonNullable<ListedRoute['schemas']> };

/** A route of project "shop" as the project route table lists it (no referer validation). */
const route = ({ method, path, auth, urls, schemas }: Synthetic): ListedRoute => {
  const declaration = {
    method,
    path,
    auth,
    rateLimit: auth === 'public' ? ({ name: 'public', by: 'ip' } as const) : undefined,
    handler: () => {},
    schema: schemas === undefined ? undefined : { checks: {}, documents: schemas },
  };
  const [listed] = listRoutes([declaration], projectTraits(false), { mounts: ['/api/shop'], project: 'shop', file: '/projects/shop/api/routes.js' });
  return { ...listed, urls: urls ?? listed.urls };
};

const syntheticRoutes: ListedRoute[] = [
  route({ method: 'GET', path: '/heartbeat', auth: 'public', urls: ['/api/shop/heartbeat', '/api/project/heartbeat'] }),
  route({ method: 'GET', path: '/items/:id', auth: 'system', urls: ['/api/shop/items/:id', '/api/project/items/:id'] }),
  route({ method: 'PUT', path: '/items/:id', auth: 'system', urls: ['/api/shop/items/:id', '/api/project/items/:id'] }),
  route({ method: 'POST', path: '/orders/:orderId/lines/:line', auth: 'custom' }),
  route({ method: 'DELETE', path: '/items/:key', auth: 'system' }),
];

test('GET /openapi.json serves a valid OpenAPI 3.1 document of the system endpoints, /docs included', async (t) => {
  const response = await service.fetch('/openapi.json');
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type') ?? '', /^application\/json/);
  const document = (await response.json()) as Document;
  t.is(document.openapi, '3.1.0');
  t.is(await validationErrors(document), undefined);
  t.deepEqual(undeclaredPathParameters(document), []);
  t.deepEqual(Object.keys(document.paths).sort(), ['/audit', '/auth/login', '/docs', '/docs/{asset}', '/healthz', '/livez', '/metrics', '/openapi.json', '/readyz', '/spaces', '/spaces/{name}', '/spaces/{name}/history', '/spaces/{name}/restore']);
});

test('/metrics and /docs document the media type of their answer, not a generic 200 (issue 37, point 10)', async (t) => {
  const document = (await (await service.fetch('/openapi.json')).json()) as Document;
  const metrics = document.paths['/metrics'].get.responses['200'];
  t.deepEqual(Object.keys(metrics.content ?? {}), ['text/plain; version=0.0.4']);
  t.not(metrics.description, 'Answered by the handler.');
  const docs = document.paths['/docs'].get.responses['200'];
  t.deepEqual(Object.keys(docs.content ?? {}), ['text/html']);
  t.not(docs.description, 'Answered by the handler.');
  const page = await service.fetch('/docs');
  t.regex(page.headers.get('content-type') ?? '', /^text\/html/, 'what the document says is what /docs answers');
});

test('the document describes the spaces bodies, answers, errors and the bearer scheme', async (t) => {
  const document = (await (await service.fetch('/openapi.json')).json()) as Document;
  t.like(document.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  const spaces = document.paths['/spaces'];
  t.deepEqual(spaces.get.security, [{ bearerAuth: [] }]);
  t.deepEqual(spaces.post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/SpaceCreate' });
  t.deepEqual(Object.keys(spaces.post.responses).sort(), ['201', '400', '401', '403', '404', '409', '413', '503']);
  t.truthy(spaces.post.responses['201'].headers.Location);
  const item = document.paths['/spaces/{name}'];
  t.deepEqual(Object.keys(item).sort(), ['delete', 'get', 'parameters', 'put']);
  t.deepEqual(item.put.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/SpaceReplace' });
  t.deepEqual(item.put.responses['412'], { $ref: '#/components/responses/PreconditionFailed' });
  t.deepEqual(item.delete.responses['412'], { $ref: '#/components/responses/PreconditionFailed' });
  t.deepEqual(item.get.responses['304'], { $ref: '#/components/responses/NotModified' });
  for (const answer of [item.get.responses['200'], item.put.responses['200'], item.delete.responses['200'], spaces.post.responses['201']]) t.truthy(answer.headers.ETag);
  t.deepEqual(
    (spaces.get.parameters ?? []).filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name),
    ['trashed'],
  );
  t.deepEqual(Object.keys(spaces.get.responses).sort(), ['200', '400', '401', '403', '404', '503']);
  const restore = document.paths['/spaces/{name}/restore'].post;
  t.deepEqual(Object.keys(restore.responses).sort(), ['200', '400', '401', '403', '404', '409', '503']);
  t.truthy(restore.responses['200'].headers.ETag);
  const history = document.paths['/spaces/{name}/history'].get;
  t.deepEqual(Object.keys(history.responses).sort(), ['200', '400', '401', '403', '404', '503']);
  t.deepEqual(
    (history.parameters ?? []).filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name),
    ['limit', 'before'],
  );
  const historyEvent = (document.components.schemas.SpaceHistory.properties as { data: { items: { required: unknown; properties: Record<string, unknown> } } }).data.items;
  t.deepEqual(historyEvent.required, ['action', 'at', 'actor', 'requestId', 'requestIdFrom', 'before', 'after']);
  t.like(historyEvent.properties.requestIdFrom, { anyOf: [{ type: 'string', enum: ['caller', 'service'] }, { type: 'null' }] });
  t.deepEqual((document.components.schemas.SpaceAnswer.properties as { data: { required: unknown } }).data.required, ['name', 'schemas', 'createdAt', 'updatedAt']);
  const space = (document.components.schemas.SpaceCreate as unknown as { properties: Record<string, unknown> }).properties;
  t.like(space, { name: { minLength: 1, maxLength: 64 }, schemas: { maxItems: 1000, items: { minLength: 1, maxLength: 128 } } }, 'the limits the body schema checks');
  t.like(document.components.schemas.SpaceCreate, { additionalProperties: false, required: ['name'] });
  t.deepEqual(document.components.schemas.Error.required, ['error']);
  t.deepEqual(document.paths['/auth/login'].post.security, []);
  t.deepEqual(document.paths['/healthz'].get.security, []);
  t.deepEqual(Object.keys(document.paths['/auth/login'].post.responses).sort(), ['200', '400', '401', '413', '429', '503']);
});

test('the document describes GET /audit: admin, its filters, both kinds of event, no 404 of the spaces switch', async (t) => {
  const document = (await (await service.fetch('/openapi.json')).json()) as Document;
  const audit = document.paths['/audit'].get;
  t.deepEqual(audit.security, [{ bearerAuth: [] }]);
  t.deepEqual(audit.tags, ['audit']);
  t.deepEqual(Object.keys(audit.responses).sort(), ['200', '400', '401', '403', '503']);
  t.deepEqual(
    (audit.parameters ?? []).filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name),
    ['limit', 'before', 'action', 'actor'],
  );
  const kinds = (document.components.schemas.AuditEvents.properties as { data: { items: { anyOf: Array<{ required: unknown }> } } }).data.items.anyOf;
  t.deepEqual(kinds.map((kind) => kind.required), [
    ['action', 'at', 'actor', 'requestId', 'requestIdFrom', 'target', 'before', 'after'],
    ['action', 'at', 'actor', 'requestId', 'requestIdFrom', 'target', 'fields'],
  ]);
});

test('project routes: every URL, :param written {param} and declared, security per auth mode', async (t) => {
  const document = buildOpenApiDocument(syntheticRoutes) as Document;
  t.is(await validationErrors(document), undefined);
  t.deepEqual(undeclaredPathParameters(document), []);
  const paths = document.paths;
  for (const key of ['/api/shop/heartbeat', '/api/project/heartbeat', '/api/shop/items/{id}', '/api/project/items/{id}', '/api/shop/orders/{orderId}/lines/{line}']) {
    t.truthy(paths[key], key);
  }
  t.deepEqual(paths['/api/shop/heartbeat'].get.security, []);
  t.truthy(paths['/api/shop/heartbeat'].get.responses['429']);
  t.deepEqual(paths['/api/project/items/{id}'].get.security, [{ bearerAuth: [] }]);
  t.truthy(paths['/api/project/items/{id}'].put.requestBody);
  const custom = paths['/api/shop/orders/{orderId}/lines/{line}'].post;
  t.is(custom.security, undefined);
  t.is(custom['x-spaceport-auth'], 'custom');
  t.regex(custom.description ?? '', /custom/i);
  const declared = (paths['/api/shop/orders/{orderId}/lines/{line}'].parameters ?? []).filter((parameter) => parameter.in === 'path');
  t.deepEqual(declared.map((parameter) => parameter.name), ['orderId', 'line']);
});

test('two spellings of one templated path share one path item', async (t) => {
  const document = buildOpenApiDocument(syntheticRoutes) as Document;
  t.false('/api/shop/items/{key}' in document.paths);
  t.deepEqual(Object.keys(document.paths['/api/shop/items/{id}']).sort(), ['delete', 'get', 'parameters', 'put']);
});

test('a path with optional groups is listed with each group and without it, each path declaring only its own parameters', async (t) => {
  const params = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' } } };
  const document = buildOpenApiDocument([
    route({ method: 'GET', path: '/echo/:a{/:b{/:c}}', auth: 'public', schemas: { params, responses: {} } }),
    route({ method: 'GET', path: '/files{/*rest}', auth: 'public' }),
  ]) as Document;
  t.is(await validationErrors(document), undefined);
  t.deepEqual(undeclaredPathParameters(document), []);
  const listed = Object.keys(document.paths).filter((path) => path.startsWith('/api/shop/'));
  t.deepEqual(listed.sort(), ['/api/shop/echo/{a}', '/api/shop/echo/{a}/{b}', '/api/shop/echo/{a}/{b}/{c}', '/api/shop/files', '/api/shop/files/{rest}']);
  const pathParameters = (path: string) => [...(document.paths[path].parameters ?? []), ...(document.paths[path].get.parameters ?? [])].filter((parameter) => parameter.in === 'path').map((parameter) => parameter.name);
  t.deepEqual(pathParameters('/api/shop/echo/{a}'), ['a', 'a']);
  t.deepEqual(pathParameters('/api/shop/echo/{a}/{b}'), ['a', 'b', 'a', 'b']);
  t.deepEqual(pathParameters('/api/shop/files'), []);
});

test('at a path two routes share, the one the router reaches first is listed; paths of groups are named against the first URL\'s same path', async (t) => {
  const operations = (document: Document) => Object.fromEntries(Object.entries(document.paths).map(([path, item]) => [path, (item.get as unknown as { operationId: string; 'x-spaceport-auth': string } | undefined)]));
  const document = buildOpenApiDocument([
    route({ method: 'GET', path: '/items', auth: 'system' }),
    route({ method: 'GET', path: '/items{/:id}', auth: 'public' }),
    route({ method: 'GET', path: '/x{/:a}{/:b}', auth: 'public' }),
    { ...route({ method: 'GET', path: '{/v1}/users', auth: 'public', urls: ['/api/shop{/v1}/users', '/api/project{/v1}/users'] }), operationId: 'listUsers' },
    route({ method: 'GET', path: '/esc\\{x\\}', auth: 'public' }),
  ]) as Document;
  t.is(await validationErrors(document), undefined);
  t.deepEqual(undeclaredPathParameters(document), []);
  const listed = operations(document);
  t.like(listed['/api/shop/items'], { 'x-spaceport-auth': 'system', operationId: 'getShopItems' }, 'the first route answers /items');
  t.like(listed['/api/shop/items/{id}'], { 'x-spaceport-auth': 'public' });
  t.like(listed['/api/shop/x/{a}'], { operationId: 'getShopXByA' }, '/x/{b} is the same path, answered as /x/{a}');
  t.like(listed['/api/shop/v1/users'], { operationId: 'listUsers' });
  t.like(listed['/api/shop/users'], { operationId: 'listUsers2' });
  t.like(listed['/api/project/v1/users'], { operationId: 'projectListUsers' });
  t.like(listed['/api/project/users'], { operationId: 'projectListUsers2' });
  t.truthy(listed['/api/shop/esc%7Bx%7D'], 'escaped braces are literal');
});

test('without project routes the document holds only the system endpoints', async (t) => {
  const document = buildOpenApiDocument(answeringServiceRoutes(service.runtime.config)) as Document;
  t.is(await validationErrors(document), undefined);
  t.false(Object.keys(document.paths).some((path) => path.startsWith('/api/')));
});

/** The component a `{ $ref: '#/components/schemas/<name>' }` names. */
function component(document: Document, reference: unknown): unknown {
  const name = String((reference as { $ref?: string }).$ref).replace('#/components/schemas/', '');
  return document.components.schemas[name];
}

test('declared summary, description, tags and schemas appear, with the answers the chain can give', async (t) => {
  const shop = await startWithProjects(t, fixtureProjects('schemas'), { expert: { referer: { enabled: true, allow: ['example.com'] } } });
  const document = (await (await shop.fetch('/openapi.json')).json()) as Document;
  t.is(await validationErrors(document), undefined);
  t.deepEqual(undeclaredPathParameters(document), []);
  const orders = document.paths['/api/shop/orders'].post;
  t.is(orders.summary, 'Place an order');
  t.regex(orders.description ?? '', /^Checks the body against a JSON Schema\.\n\nNeeds a system JWT\.$/);
  t.deepEqual(orders.tags, ['orders']);
  t.like(component(document, orders.requestBody.content['application/json'].schema), { required: ['amount', 'lines'], additionalProperties: false });
  t.deepEqual(Object.keys(orders.responses).sort(), ['201', '400', '401', '403', '413', '500', '503', '504']);
  t.is(orders.responses['201'].description, 'Created');
  t.like(component(document, orders.responses['201'].content?.['application/json'].schema), { properties: { id: { type: 'string' } } });
  t.deepEqual(orders.responses['503'], { $ref: '#/components/responses/ServiceUnavailable' });

  const publicOrders = document.paths['/api/shop/public-orders'].post;
  t.deepEqual(Object.keys(publicOrders.responses).sort(), ['200', '400', '403', '413', '429', '500', '503', '504']);
  t.truthy(publicOrders.responses['200'].headers['RateLimit-Remaining']);
  t.deepEqual(publicOrders.tags, ['shop'], 'without declared tags, the project names the group');
  t.truthy(document.paths['/api/shop/partner-orders'].post.responses['401']);

  const item = document.paths['/api/shop/items/{id}'];
  t.deepEqual(
    item.get.parameters?.map(({ name, in: where, required, schema }) => ({ name, in: where, required, schema })),
    [
      { name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } },
      { name: 'limit', in: 'query', required: false, schema: { type: 'integer', maximum: 100 } },
      { name: 'tag', in: 'query', required: false, schema: { type: 'array', items: { type: 'string' } } },
    ],
  );
  t.deepEqual(item.put.parameters, [{ name: 'mode', in: 'query', required: true, schema: { type: 'string', enum: ['replace', 'merge'] } }]);
  t.like(component(document, document.paths['/api/shop/zod-orders'].post.requestBody.content['application/json'].schema), {
    required: ['amount'],
    properties: { amount: { type: 'number', exclusiveMinimum: 0 }, note: { type: 'string', maxLength: 20 } },
  });
});

test('without referer validation no project route lists 403; without a request schema, 400 still (tenant, malformed body)', async (t) => {
  const document = buildOpenApiDocument(syntheticRoutes) as Document;
  const heartbeat = document.paths['/api/shop/heartbeat'].get;
  t.deepEqual(Object.keys(heartbeat.responses).sort(), ['200', '400', '413', '429', '500', '503', '504']);
  t.deepEqual(Object.keys(document.paths['/api/shop/items/{id}'].get.responses).sort(), ['200', '400', '401', '413', '500', '503', '504']);
});

test('a schema with internal references (zod recursion) is rebased into components and every $ref resolves', async (t) => {
  const tree = {
    type: 'object',
    properties: { root: { $ref: '#/$defs/Node' } },
    $defs: { Node: { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#/$defs/Node' } } } } },
  };
  const query = { type: 'object', properties: { node: { $ref: '#/$defs/Node' } }, $defs: tree.$defs };
  const routes: ListedRoute[] = [
    route({ method: 'POST', path: '/trees/:id', auth: 'system', schemas: { body: tree, query, responses: { 200: tree } } }),
    route({ method: 'GET', path: '/trees/:key', auth: 'system', schemas: { params: { type: 'object', properties: { key: { type: 'string' } } }, responses: {} } }),
  ];
  const document = buildOpenApiDocument(routes) as Document;
  t.is(await validationErrors(document), undefined, 'resolveRefs throws on a reference that points nowhere');
  const post = document.paths['/api/shop/trees/{id}'].post;
  t.deepEqual(post.parameters?.[0].schema, { $ref: '#/components/schemas/shop.POST.trees.id.query/$defs/Node' });
  t.deepEqual(
    document.paths['/api/shop/trees/{id}'].get.parameters?.map((parameter) => parameter.name),
    ['id'],
    'a route spelling the parameter :key is listed under the shared {id}',
  );
});

test('the service\'s own routes are named in their request log lines, as project routes are', async (t) => {
  const requestId = 'named-system-route';
  t.is((await service.fetch('/openapi.json', { headers: { 'X-Request-Id': requestId } })).status, 200);
  const line = service.logs().find((entry) => entry.msg === 'request' && entry.requestId === requestId);
  t.like(line, { route: 'GET /openapi.json', status: 200 });
  t.is(line?.project, undefined);
});

test('/spaces and its tag appear in the document only while spaces.enabled is true', async (t) => {
  const disabled = await startWithProjects(t, fixtureProjects('schemas'));
  const document = (await (await disabled.fetch('/openapi.json')).json()) as Document & { tags: readonly { name: string }[] };
  t.deepEqual(Object.keys(document.paths).filter((path) => path.startsWith('/spaces')), []);
  t.false(document.tags.some((tag) => tag.name === 'spaces'));
  t.is((await disabled.fetch('/spaces')).status, 404, 'as the service answers');
  t.truthy((await (await service.fetch('/openapi.json')).json() as Document).paths['/spaces'], 'enabled: listed');
});

test('every operation has an operationId: unique, a camelCase identifier, the same from one build to the next', async (t) => {
  const routes = [...answeringServiceRoutes(service.runtime.config), ...syntheticRoutes];
  const first = buildOpenApiDocument(routes) as Document;
  const ids = Object.values(first.paths).flatMap((item) =>
    Object.entries(item).flatMap(([method, operation]) => (method === 'parameters' ? [] : [(operation as unknown as { operationId: string }).operationId])),
  );
  t.is(new Set(ids).size, ids.length);
  for (const id of ids) t.regex(id, /^[a-z][A-Za-z0-9]*$/);
  t.deepEqual(buildOpenApiDocument(routes) as Document, first);
  const named = (path: string, method: 'get' | 'put' | 'post' | 'delete') => (first.paths[path][method] as unknown as { operationId: string }).operationId;
  t.is(named('/healthz', 'get'), 'health', 'a declared operationId is kept');
  t.is(named('/api/shop/items/{id}', 'get'), 'getShopItemsById');
  t.is(named('/api/project/items/{id}', 'get'), 'getProjectItemsById', 'the default mount is another operation, named by its URL');
  t.is(named('/api/shop/items/{id}', 'delete'), 'deleteShopItemsByKey', 'named by its own parameter');
  t.is(named('/api/shop/orders/{orderId}/lines/{line}', 'post'), 'postShopOrdersByOrderIdLinesByLine');
});

test('a file field makes the body multipart/form-data; a declared security goes into securitySchemes and the operation', async (t) => {
  const shop = await startWithProjects(t, fixtureProjects('schemas'));
  const document = (await (await shop.fetch('/openapi.json')).json()) as Document & { servers: unknown };
  t.deepEqual(document.servers, [{ url: '/', description: 'The service that serves this document.' }]);
  const upload = document.paths['/api/shop/attachments'].post;
  t.deepEqual(Object.keys(upload.requestBody.content), ['multipart/form-data']);
  t.like(component(document, upload.requestBody.content['multipart/form-data'].schema), { properties: { file: { type: 'string', format: 'binary' } } });
  t.deepEqual(Object.keys(document.paths['/api/shop/orders'].post.requestBody.content), ['application/json'], 'no file field: JSON');
  const operationIdOf = (path: string) => (document.paths[path].post as unknown as { operationId: string }).operationId;
  t.is(operationIdOf('/api/shop/orders'), 'placeOrder', 'a declared operationId, at the project’s own mount');
  t.is(operationIdOf('/api/project/orders'), 'projectPlaceOrder', 'and under the default mount');

  const partnerKey = { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The partner key.' };
  t.deepEqual(document.components.securitySchemes['x-api-key'], partnerKey);
  for (const path of ['/api/shop/partner/ping', '/api/project/partner/ping']) t.deepEqual(document.paths[path].get.security, [{ 'x-api-key': [] }], path);
  t.deepEqual(document.paths['/api/shop/partner-orders'].post.security, [{ 'x-api-key': [] }], 'one scheme, declared twice, listed once');
  t.deepEqual(document.paths['/metrics'].get.security, [{ 'bearerAuth.metrics': [] }], 'not the system JWT: a name of its own');
  t.like(document.components.securitySchemes['bearerAuth.metrics'], { type: 'http', scheme: 'bearer' });
  t.deepEqual(document.paths['/api/shop/orders'].post.security, [{ bearerAuth: [] }]);
  t.deepEqual(document.paths['/api/shop/orders'].post.responses['400'], { $ref: '#/components/responses/BadRequest' });
  t.like(component(document, { $ref: '#/components/schemas/BadRequestError' }), { required: ['error'], properties: { errors: { type: 'array' } } });
});

test('an array of files is a file field too; several schemes are alternatives, named apart when they differ', async (t) => {
  const files = { type: 'object', properties: { photos: { type: 'array', items: { type: 'string', format: 'binary' } } } };
  const keyed = (security: readonly Record<string, string>[], path: string): ListedRoute => ({ ...route({ method: 'POST', path, auth: 'custom', schemas: { body: files, responses: {} } }), security });
  const document = buildOpenApiDocument([
    keyed([{ type: 'apiKey', in: 'header', name: 'x-key' }, { type: 'apiKey', in: 'query', name: 'key' }], '/photos'),
    keyed([{ type: 'apiKey', in: 'header', name: 'x-key', description: 'another key' }], '/albums'),
  ]) as Document;
  t.is(await validationErrors(document), undefined);
  t.deepEqual(Object.keys(document.paths['/api/shop/photos'].post.requestBody.content), ['multipart/form-data']);
  t.deepEqual(document.paths['/api/shop/photos'].post.security, [{ 'x-key': [] }, { 'key.query': [] }]);
  t.deepEqual(document.paths['/api/shop/albums'].post.security, [{ 'x-key.shop': [] }]);
  t.deepEqual(Object.keys(document.components.securitySchemes).sort(), ['key.query', 'x-key', 'x-key.shop']);
});
