import test from 'ava';
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
  await orders.waitFor({ timeout: 10_000 });
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
