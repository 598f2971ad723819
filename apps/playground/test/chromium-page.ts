import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";

// What the playground's Chromium tests share: paths in the repository, where screenshots go, and
// polling an expression in the page.

/** A path in the repository. */
export const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

/** Where the screenshots go (gitignored). */
export const ARTIFACTS = repo("apps/playground/test-artifacts");

/** Polls `expression` (evaluated in the page) until it is true; throws after `ms`. */
export async function until(page: Page, expression: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while ((await page.evaluate<boolean>(expression)) !== true) {
    if (Date.now() > deadline) throw new Error(`not true within ${ms} ms: ${expression}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
