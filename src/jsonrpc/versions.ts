/**
 * Protocol revisions this gateway speaks, and which era each belongs to: the one place that knows
 * the lists and the rule (below every layer that needs them: the HTTP routes check the header, a
 * session or the shared pool negotiates, the 2026 edge and the era probe compare, metrics and
 * traces label).
 *
 * Two eras: `2025` negotiates one revision in `initialize` and keeps a session; `2026` (from
 * 2026-07-28, SEP-2575) is stateless, every request carrying its revision. Revisions are dates, so
 * their text order is their time order.
 */

/** Protocol revisions of the 2025 era this gateway speaks, oldest first. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'] as const;

/** The newest of them: what a gateway-composed handshake or answer offers. */
export const LATEST_PROTOCOL_VERSION: string = SUPPORTED_PROTOCOL_VERSIONS[SUPPORTED_PROTOCOL_VERSIONS.length - 1] as string;

/** The stateless revision: an upstream is modern only if its `server/discover` lists exactly this. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** Every modern revision this gateway serves (newest first). */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = Object.freeze([MODERN_PROTOCOL_VERSION]);

/** Every revision of both eras, newest first (what a `server/discover` answer lists). */
export const ALL_PROTOCOL_VERSIONS: readonly string[] = Object.freeze([...MODERN_PROTOCOL_VERSIONS, ...[...SUPPORTED_PROTOCOL_VERSIONS].reverse()]);

export type Era = '2025' | '2026';

const supported: ReadonlySet<string> = new Set(SUPPORTED_PROTOCOL_VERSIONS);
const modern: ReadonlySet<string> = new Set(MODERN_PROTOCOL_VERSIONS);

/** True for a 2025-era revision this gateway negotiates. */
export function isSupportedVersion(version: unknown): version is string {
  return typeof version === 'string' && supported.has(version);
}

/** True for a modern revision this gateway serves (a claim of any other modern one is -32022). */
export function isServedModernVersion(version: unknown): version is string {
  return typeof version === 'string' && modern.has(version);
}

/**
 * True for a revision of the stateless era, served or not: 2026-07-28 and anything later. Whether
 * a request is 2026 is decided by this, the refusal of an unknown one comes after (era.ts).
 */
export function isModernVersion(version: string): boolean {
  return version >= MODERN_PROTOCOL_VERSION;
}

/** The era of a revision (metrics and trace labels): undefined (before initialize) is 2025. */
export function eraOf(version: string | undefined): Era {
  return version !== undefined && isModernVersion(version) ? '2026' : '2025';
}
