// A real browser for tests of web UIs served on loopback: Debian's Chromium (installed by
// deploy/local/tools/ensure-debian-package.sh) driven by playwright-core, which never downloads a
// browser of its own. Nothing may leave the machine: Chromium's own background traffic is
// switched off by flags, and every page request to a non-loopback host is aborted and recorded.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { ensureDebianPackage } from './debian-package.js';

export const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/** Installs Chromium if it is missing (apt-get, a minute the first time); fails with the script's reason. */
export async function ensureChromium(): Promise<void> {
  try {
    await ensureDebianPackage('chromium', CHROMIUM);
  } catch (err) {
    throw new Error(`Chromium is not available for the browser test: ${(err as Error).message}`);
  }
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export interface TestBrowser {
  page: Page;
  /** Every request the page tried to send off the machine (aborted). */
  blockedRequests: string[];
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  // A fresh profile each time: no state from an earlier run, and nothing written to $HOME.
  const profile = await mkdtemp(join(tmpdir(), 'weka-chromium-profile-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1600, height: 1000 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        // Without these Chromium phones home (updates, safe browsing lists, sync, field trials).
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        // Belt and braces: no host name but loopback ever resolves.
        '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1',
      ],
    });
  } catch (err) {
    await rm(profile, { recursive: true, force: true });
    throw new Error(`Chromium (${CHROMIUM}) could not start: ${err instanceof Error ? err.message : String(err)}`);
  }
  const blockedRequests: string[] = [];
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (!url.protocol.startsWith('http') || LOOPBACK_HOSTS.has(url.hostname)) return route.continue();
    blockedRequests.push(url.href);
    return route.abort('blockedbyclient');
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    page,
    blockedRequests,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Saves a full-page screenshot as test-artifacts/<dir>/<name>.png and returns its path. */
export async function saveScreenshot(page: Page, dir: string, name: string): Promise<string> {
  const folder = join(ARTIFACTS, dir);
  await mkdir(folder, { recursive: true });
  const path = join(folder, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
