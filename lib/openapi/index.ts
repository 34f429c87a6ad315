export { buildOpenApiDocument } from './document.ts';
export { openApiTemplate } from './project-paths.ts';
export { addDocsPage } from './docs-page.ts';
