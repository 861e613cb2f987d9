/**
 * Headless Debian Chromium for the browser suites (tests/docs.browser.test.ts, tests/web.browser.test.ts),
 * driven by playwright-core. Needs /usr/bin/chromium (`apt-get install -y chromium`; CHROMIUM_PATH
 * overrides). Without it a suite is skipped with a message, unless BAZAAR_REQUIRE_CHROMIUM=1 (.ci/run
 * sets it after installing chromium), where a missing browser fails.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const chromiumPresent = existsSync(CHROMIUM);
export const chromiumRequired = process.env.BAZAAR_REQUIRE_CHROMIUM === '1';
/** Whether a browser suite runs: `describe.skipIf(!runBrowserSuite(name))`; warns when it is skipped. */
export function runBrowserSuite(suite: string): boolean {
  if (!chromiumPresent && !chromiumRequired) {
    console.warn(`[${suite}] skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
    return false;
  }
  return true;
}

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launch headless Chromium; throws a clear error when BAZAAR_REQUIRE_CHROMIUM=1 and it is missing. */
export async function launchChromium(): Promise<Browser> {
  if (!chromiumPresent) throw new Error(`BAZAAR_REQUIRE_CHROMIUM=1 but there is no Chromium at ${CHROMIUM}`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}
