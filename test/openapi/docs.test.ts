import test from 'ava';
import { serviceForFile, type ServiceUnderTest } from '../helpers/service.ts';

let service: ServiceUnderTest;
// No default tenant: a request without the tenant header would be 400 anywhere tenant-scoped.
serviceForFile({ expert: { tenancy: { defaultTenant: null } } }, (started) => {
  service = started;
});

test('GET /docs is an HTML page that loads only the service’s own files, without a tenant', async (t) => {
  const response = await service.fetch('/docs');
  t.is(response.status, 200);
  t.is(response.headers.get('content-type'), 'text/html; charset=utf-8');
  t.regex(response.headers.get('content-security-policy') ?? '', /default-src 'self'/);
  const html = await response.text();
  const loaded = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
  t.deepEqual(loaded, ['/docs/swagger-ui.css', '/docs/favicon-32x32.png', '/docs/swagger-ui-bundle.js', '/docs/start.js']);
  for (const asset of loaded) {
    const file = await service.fetch(asset);
    t.is(file.status, 200, asset);
    t.true((await file.arrayBuffer()).byteLength > 0, asset);
  }
  t.regex(await (await service.fetch('/docs/start.js')).text(), /url: '\/openapi\.json'/);
});

test('the page’s files are cached and revalidated by their ETag', async (t) => {
  const first = await service.fetch('/docs/swagger-ui-bundle.js');
  await first.arrayBuffer();
  const etag = first.headers.get('etag') ?? '';
  t.regex(etag, /^"swagger-ui-\d+\.\d+\.\d+-swagger-ui-bundle\.js"$/);
  t.is(first.headers.get('cache-control'), 'public, max-age=86400');
  t.is(first.headers.get('content-type'), 'text/javascript; charset=utf-8');
  // fetch() would add `Cache-Control: no-cache` to a conditional request, which asks for the whole file.
  const again = await service.fetch('/docs/swagger-ui-bundle.js', { headers: { 'if-none-match': etag, 'cache-control': 'max-age=0' } });
  t.is(again.status, 304);
});

test('no other file of the package, nor any path outside it, is reachable under /docs/', async (t) => {
  for (const pathname of ['/docs/index.html', '/docs/package.json', '/docs/..%2F..%2Fpackage.json', '/docs/swagger-ui.js.map']) {
    const response = await service.fetch(pathname, { headers: { tenant: 'default' } });
    t.is(response.status, 404, pathname);
  }
});
