/**
 * Checks the web app's browser suites (tests/web*.browser.test.ts) run on every page state (issue 23):
 * the two screens (a desktop window, a 390×844 phone with touch), no horizontal scroll, and axe-core
 * with no critical or serious violation.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

// page.evaluate callbacks run in the browser; the root tsconfig has no DOM lib (Node code only)
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
declare const window: any;

/** axe-core's browser bundle, evaluated in the page (page.evaluate is not subject to the page's CSP) */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The two screens the story runs on: a desktop window, and a 390×844 phone with touch. */
export const PROFILES = [
  { name: 'desktop', context: { viewport: { width: 1100, height: 800 } } },
  { name: 'phone', context: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 } },
] as const;

/** No sideways scrolling: the document is not wider than the viewport. */
export async function expectNoHorizontalScroll(page: Page, state: string) {
  const { scroll, inner, culprits } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    inner: window.innerWidth,
    culprits: ([...document.querySelectorAll('body *')] as any[])
      .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
      .slice(0, 5)
      .map((el) => `${el.tagName}.${el.className}: ${Math.round(el.getBoundingClientRect().right)}px`),
  }));
  expect(scroll, `${state}: scrollWidth ${scroll} > innerWidth ${inner}: ${culprits.join('; ')}`).toBeLessThanOrEqual(inner);
}

/** axe-core on the page as it is: no critical or serious violation (WCAG 2.2 A/AA rules and best practices). */
export async function expectAccessible(page: Page, state: string) {
  if (!(await page.evaluate(() => !!window.axe))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v: any) => v.impact === 'critical' || v.impact === 'serious')
      .map((v: any) => `${v.id} (${v.impact}): ${v.nodes.map((n: any) => n.target.join(' ')).slice(0, 3).join(', ')}`);
  });
  expect(violations, state).toEqual([]);
}
