/**
 * A headless Chromium for the status page tests: Debian's `chromium` (installed by .ci/run), or
 * the binary named by CHROMIUM_PATH. playwright-core drives it; it downloads no browser of its own.
 */
import { existsSync } from 'node:fs';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];

/** The browser binary to launch, or undefined when this machine has none. */
export function findChromium(): string | undefined {
  const named = process.env.CHROMIUM_PATH;
  if (named !== undefined && named !== '') return existsSync(named) ? named : undefined;
  return CANDIDATES.find((path) => existsSync(path));
}

/** Flags for a headless run in a container (often as root, with a small /dev/shm). */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'];
