import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Context, Middleware } from 'koa';
import { paramsOf } from '../routes/router.ts';

/** Swagger UI's files, from the npm package: the page loads nothing from elsewhere (SPEC §12). */
const SWAGGER_UI = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const OWN_FILES = path.join(import.meta.dirname, 'docs');

interface Asset {
  readonly file: string;
  readonly type: string;
  /** Swagger UI's files change with the package's version; ours with their content. */
  readonly etag: string;
}

const swaggerVersion = (JSON.parse(readFileSync(path.join(SWAGGER_UI, 'package.json'), 'utf8')) as { version: string }).version;

function swaggerAsset(name: string, type: string): Asset {
  return { file: path.join(SWAGGER_UI, name), type, etag: `"swagger-ui-${swaggerVersion}-${name}"` };
}

function ownAsset(name: string, type: string): Asset {
  const file = path.join(OWN_FILES, name);
  return { file, type, etag: `"${createHash('sha256').update(readFileSync(file)).digest('base64url').slice(0, 16)}"` };
}

const PAGE = ownAsset('page.html', 'text/html; charset=utf-8');
const ASSETS: Readonly<Record<string, Asset>> = {
  'swagger-ui.css': swaggerAsset('swagger-ui.css', 'text/css; charset=utf-8'),
  'swagger-ui-bundle.js': swaggerAsset('swagger-ui-bundle.js', 'text/javascript; charset=utf-8'),
  'favicon-32x32.png': swaggerAsset('favicon-32x32.png', 'image/png'),
  'start.js': ownAsset('start.js', 'text/javascript; charset=utf-8'),
};

/** Only the service's own origin; Swagger UI sets inline styles and draws some icons as data: URLs. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data:",
  "style-src 'self' 'unsafe-inline'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

/** `GET /docs`: an API reference page (Swagger UI) for `/openapi.json`. */
export const docsPage: Middleware = (ctx) => {
  ctx.set('Cache-Control', 'no-cache');
  sendAsset(ctx, PAGE);
};

/** `GET /docs/:asset`: cached and revalidated by an ETag of the package's version; no other file is reachable. */
export const docsAsset: Middleware = (ctx, next) => {
  const name = paramsOf(ctx).asset;
  const asset = typeof name === 'string' && Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
  if (asset === undefined) return next();
  ctx.set('Cache-Control', 'public, max-age=86400');
  sendAsset(ctx, asset);
};

function sendAsset(ctx: Context, asset: Asset): void {
  ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.etag = asset.etag;
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.type = asset.type;
  ctx.length = statSync(asset.file).size;
  ctx.body = createReadStream(asset.file);
}
