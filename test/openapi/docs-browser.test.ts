import test, { type ExecutionContext } from 'ava';
import type { Locator, Page } from 'playwright-core';
import { dropTestDatabase } from '../helpers/service.ts';
import { launchChromium, testWithChromium } from '../helpers/chromium.ts';
import { fixtureProjects, startWithProjects } from '../helpers/projects.ts';

const browserTest = testWithChromium();
test.after.always(dropTestDatabase);

browserTest('/docs in a real headless Chromium lists the project routes, loading nothing from elsewhere', async (t) => {
  const service = await startWithProjects(t, fixtureProjects('schemas'));
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  const requested: string[] = [];
  const problems: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });

  await page.goto(`${service.url}/docs`);
  const orders = page.locator('.opblock', { hasText: '/api/shop/orders' }).first();
  await orders.waitFor({ timeout: 30_000 });
  const listed = await page.locator('.opblock-summary-path').allInnerTexts();
  for (const path of ['/api/shop/orders', '/api/shop/zod-orders', '/api/shop/items/{id}', '/healthz']) {
    t.true(listed.some((text) => text.replace(/\u200b/g, '') === path), `${path} is listed`);
  }
  t.true(await orders.getByText('Place an order').isVisible());

  // Opening the operation shows its declared body schema.
  await orders.locator('.opblock-summary').click();
  await orders.getByText('Request body').waitFor();
  t.true(await orders.getByText('amount').first().isVisible());

  t.deepEqual(requested.filter((url) => !url.startsWith(`${service.url}/`)), [], 'every request goes to the service');
  t.deepEqual(problems, []);
});

/** The operation `method path` on the page, found by its path as Swagger UI marks it. */
function operationOn(page: Page, method: string, path: string): Locator {
  return page.locator(`.opblock-${method}`, { has: page.locator(`.opblock-summary-path[data-path="${path}"]`) });
}

/** Opens the operation, presses "Try it out", lets `fill` fill it in, presses "Execute" and gives the answer shown. */
async function tryItOut(operation: Locator, fill: () => Promise<void>): Promise<ShownAnswer> {
  await operation.locator('.opblock-summary').click();
  await operation.locator('.try-out__btn').click();
  await fill();
  await operation.locator('.execute').click();
  return answerShown(operation);
}

interface ShownAnswer {
  readonly status: string;
  readonly body: string;
}

/** The live answer Swagger UI shows under the operation, once it shows one (with `status`, when given). */
async function answerShown(operation: Locator, status?: string): Promise<ShownAnswer> {
  const answer = operation.locator('.live-responses-table .response');
  await answer.locator('.response-col_status', status === undefined ? {} : { hasText: status }).waitFor({ timeout: 30_000 });
  const shownStatus = (await answer.locator('.response-col_status').textContent()) ?? '';
  return { status: shownStatus.trim(), body: (await answer.locator('.response-col_description pre').first().textContent()) ?? '' };
}

async function openDocs(t: ExecutionContext, url: string): Promise<Page> {
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  await page.goto(`${url}/docs`);
  await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
  return page;
}

browserTest('"Try it out" on a route with a file field shows a file picker and sends the file as multipart', async (t) => {
  const service = await startWithProjects(t, fixtureProjects('schemas'));
  const page = await openDocs(t, service.url);
  const attachments = operationOn(page, 'post', '/api/shop/attachments');
  const answer = await tryItOut(attachments, async () => {
    await attachments.locator('input[type=file]').first().setInputFiles({ name: 'hello.txt', mimeType: 'text/plain', buffer: Buffer.from('hello, world') });
  });
  t.is(answer.status, '200', answer.body);
  t.like(JSON.parse(answer.body), { files: [{ field: 'file', name: 'hello.txt', size: 12 }] });
});

browserTest('an API key typed through "Authorize" is sent to a route that declares it, which accepts it', async (t) => {
  const service = await startWithProjects(t, fixtureProjects('schemas'));
  const page = await openDocs(t, service.url);
  const ping = operationOn(page, 'get', '/api/shop/partner/ping');
  t.is((await tryItOut(ping, async () => {})).status, '401', 'refused before a key is given');

  await page.locator('.auth-wrapper .authorize').click();
  const scheme = page.locator('.modal-ux .auth-container', { hasText: 'x-api-key' });
  await scheme.locator('input').fill('open-sesame');
  await scheme.locator('button.authorize').click();
  await page.locator('.modal-ux .btn-done').first().click();

  await ping.locator('.execute').click();
  t.like(JSON.parse((await answerShown(ping, '200')).body), { locals: { authenticated: true } }, 'the route ran, its auth satisfied');
});
