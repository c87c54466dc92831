/**
 * The environment variables a child inherits from the gateway unless its target says otherwise:
 * what a process needs to run here, nothing that usually holds one server's secret.
 * - finding programs, its home and its locale (the MCP TypeScript SDK passes the first six);
 * - reaching the network the way this machine must: proxies and the certificate authorities a
 *   TLS-inspecting proxy or a private registry needs. Without them `npx -y <server>` retried
 *   certificate errors for minutes. A proxy URL may carry credentials, but they are the
 *   machine's, meant for every process that goes out, not one server's.
 */
export const DEFAULT_INHERITED_ENV: readonly string[] = Object.freeze([
  'HOME',
  'LOGNAME',
  'PATH',
  'SHELL',
  'TERM',
  'USER',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  ...networkEnv(),
]);

/** Proxy and CA variables, in the spellings tools read (curl and Node want lower case too). */
function networkEnv(): string[] {
  const proxies = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'ALL_PROXY'];
  return [
    ...proxies,
    ...proxies.map((name) => name.toLowerCase()),
    'NODE_EXTRA_CA_CERTS',
    'NODE_USE_ENV_PROXY',
    'SSL_CERT_FILE',
    'SSL_CERT_DIR',
    'REQUESTS_CA_BUNDLE',
    'CURL_CA_BUNDLE',
    'PIP_CERT',
    'GIT_SSL_CAINFO',
    'npm_config_cafile',
    'npm_config_proxy',
    'npm_config_https_proxy',
    'npm_config_registry',
  ];
}
