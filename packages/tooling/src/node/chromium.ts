// The browser tests' Chromium: Debian's, driven by playwright-core (which downloads no browser of
// its own). CI (.ci/run) installs it; elsewhere the tests skip with a message when it is missing
// (set KB_CHROMIUM to use another binary).
import { existsSync } from "node:fs";

/** The Chromium binary the tests drive. */
export const CHROMIUM: string = process.env.KB_CHROMIUM ?? "/usr/bin/chromium";
/** How to get it on Debian. */
export const INSTALL_CHROMIUM = "apt-get update && apt-get install -y chromium";
/** True when the binary is there. */
export const haveChromium = existsSync(CHROMIUM);
const inCi = (process.env.CI ?? "") !== "" && process.env.CI !== "false";
/** Run the browser tests: Chromium is there, or CI (where its absence fails them). */
export const runBrowserTests = haveChromium || inCi;

/**
 * playwright-core's launch options for it: headless; as root in a container, no sandbox; no GPU;
 * nothing that calls out to Google's services.
 */
export const chromiumLaunchOptions: {
  readonly executablePath: string;
  readonly headless: boolean;
  readonly args: readonly string[];
} = Object.freeze({
  executablePath: CHROMIUM,
  headless: true,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ],
});
