/**
 * Protocol revisions this gateway speaks. The 2025 era negotiates one of these in initialize; the
 * list sits here, below every layer that needs it (the HTTP routes check the header, a session or
 * the shared pool negotiates).
 */

/** Protocol revisions of the 2025 era this gateway speaks, oldest first. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'] as const;

/** The newest of them: what a gateway-composed handshake or answer offers. */
export const LATEST_PROTOCOL_VERSION: string = SUPPORTED_PROTOCOL_VERSIONS[SUPPORTED_PROTOCOL_VERSIONS.length - 1] as string;

const supported: ReadonlySet<string> = new Set(SUPPORTED_PROTOCOL_VERSIONS);

/** True for a revision of the list above. */
export function isSupportedVersion(version: unknown): version is string {
  return typeof version === 'string' && supported.has(version);
}
