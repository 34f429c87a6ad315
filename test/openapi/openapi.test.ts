import test from 'ava';
import { Validator } from '@seriousme/openapi-schema-validator';
import { buildOpenApiDocument } from '../../lib/openapi/index.ts';
import type { MountedRoute } from '../../lib/projects/types.ts';
import { serviceForFile, type TestService } from '../helpers/service.ts';

/** The parts of an OpenAPI document these tests read (the validator checks the whole). */
type Parameter = {
  readonly $ref?: string;
  readonly name?: string;
  readonly in?: string;
  readonly required?: boolean;
};
type Operation = {
  readonly security?: unknown;
  readonly description?: string;
  readonly 'x-spaceport-auth'?: string;
  readonly requestBody: { readonly content: Readonly<Record<string, { readonly schema: unknown }>> };
  readonly responses: Readonly<Record<string, { readonly headers: Readonly<Record<string, unknown>> }>>;
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
    readonly schemas: Readonly<Record<string, { readonly required?: readonly string[]; readonly additionalProperties?: boolean }>>;
  };
};

let service: TestService;
serviceForFile({}, (started) => {
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

const route = (overrides: Partial<MountedRoute> & Pick<MountedRoute, 'method' | 'path' | 'auth'>): MountedRoute => ({
  project: 'shop',
  urls: [`/api/shop${overrides.path}`],
  file: '/projects/shop/api/routes.js',
  ...overrides,
});

const syntheticRoutes: MountedRoute[] = [
  route({ method: 'GET', path: '/heartbeat', auth: 'public', urls: ['/api/shop/heartbeat', '/api/project/heartbeat'] }),
  route({ method: 'GET', path: '/items/:id', auth: 'system', urls: ['/api/shop/items/:id', '/api/project/items/:id'] }),
  route({ method: 'PUT', path: '/items/:id', auth: 'system', urls: ['/api/shop/items/:id', '/api/project/items/:id'] }),
  route({ method: 'POST', path: '/orders/:orderId/lines/:line', auth: 'custom' }),
  route({ method: 'DELETE', path: '/items/:key', auth: 'system', project: 'shop' }),
];

test('GET /openapi.json serves a valid OpenAPI 3.1 document of the system endpoints', async (t) => {
  const response = await service.fetch('/openapi.json');
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type') ?? '', /^application\/json/);
  const document = (await response.json()) as Document;
  t.is(document.openapi, '3.1.0');
  t.is(await validationErrors(document), undefined);
  t.deepEqual(undeclaredPathParameters(document), []);
  t.deepEqual(Object.keys(document.paths).sort(), ['/auth/login', '/healthz', '/openapi.json', '/spaces', '/spaces/{name}']);
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
  t.deepEqual(document.components.schemas.Space.required, ['name', 'schemas', 'createdAt', 'updatedAt']);
  t.like(document.components.schemas.SpaceCreate, { additionalProperties: false, required: ['name'] });
  t.deepEqual(document.components.schemas.Error.required, ['error']);
  t.deepEqual(document.paths['/auth/login'].post.security, []);
  t.deepEqual(document.paths['/healthz'].get.security, []);
  t.deepEqual(Object.keys(document.paths['/auth/login'].post.responses).sort(), ['200', '400', '401', '413', '429', '503']);
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

test('without project routes the document holds only the system endpoints', async (t) => {
  const document = buildOpenApiDocument([]) as Document;
  t.is(await validationErrors(document), undefined);
  t.false(Object.keys(document.paths).some((path) => path.startsWith('/api/')));
});
