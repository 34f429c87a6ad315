export { buildOpenApiDocument } from './document.ts';
export { openApiTemplate } from './paths.ts';
export { docsAsset, docsPage } from './docs-page.ts';
