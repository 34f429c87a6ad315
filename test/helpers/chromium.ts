import { existsSync } from 'node:fs';
import test from 'ava';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium, which `make test` installs where it can. */
export const CHROMIUM = '/usr/bin/chromium';

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/**
 * `test` for tests that drive a real browser. Under CI they always run (and fail without
 * Chromium); elsewhere a machine without it skips them, saying so, and the run counts them.
 */
export function testWithChromium(): typeof test.serial | typeof test.serial.skip {
  if (process.env.CI || existsSync(CHROMIUM)) return test.serial;
  process.stderr.write(`no Chromium at ${CHROMIUM} (make test installs it where it can): the browser tests are skipped\n`);
  return test.serial.skip;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
}
