/**
 * Debian's chromium, driven by playwright-core (which downloads no browser):
 * headless, without the sandbox (CI runs as root). When it is not installed
 * the browser tests skip and say why; with STANDIN_REQUIRE_BROWSER=1 (.ci/run
 * sets it) a missing browser is a failure instead.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = process.env.STANDIN_CHROMIUM ?? "/usr/bin/chromium";
export const HAVE_CHROMIUM = existsSync(CHROMIUM);
export const SCREENSHOTS = join(process.cwd(), "test-results/ui");

if (!HAVE_CHROMIUM) {
  if (process.env.STANDIN_REQUIRE_BROWSER === "1") throw new Error(`the browser tests need chromium at ${CHROMIUM} (apt-get install chromium, or STANDIN_CHROMIUM=path)`);
  console.warn(`skipping the dashboard's browser tests: no chromium at ${CHROMIUM} (apt-get install chromium, or set STANDIN_CHROMIUM)`);
}

export async function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
}

/** A page 1400×1000 that fails the test on any script error the page throws. */
export async function openPage(browser: Browser, errors: string[]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  // Generous: a busy 2-core machine is slow, never wrong.
  page.setDefaultTimeout(60_000);
  return page;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: false });
}
