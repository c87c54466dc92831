/**
 * The per-user OAuth client as the Runtime makes it from `gateway.oauth`: its vault in the file
 * named there, or in Redis when the gateway is a cluster (so every replica serves every user's
 * connections), and the public origin its callback and client document live at (`publicUrl`,
 * `auth.publicUrl`, else the address the gateway listens on, known once it listens).
 */
import type { Cluster } from '../../cluster/cluster.ts';
import { createRedisVaultStore, type VaultStore } from '../../cluster/vault-store.ts';
import type { GatewayConfig } from '../../config/types.ts';
import type { Logger } from '../../log/logger.ts';
import { createUserOAuth, type UserOAuth } from './user-oauth.ts';
import { createFileVaultStore } from './vault-file.ts';
import { createVault, deriveVaultKeys } from './vault.ts';

export interface GatewayUserOAuth {
  readonly client: UserOAuth;
  /** The name and the origin the callback is at: set once the gateway listens. */
  readonly clientName: string;
  baseUrl(): string;
  listeningAt(url: string): void;
}

/** A store whose file is read on first use (the Runtime is made synchronously). */
function lazyFileStore(path: string): VaultStore {
  let opened: Promise<VaultStore> | undefined;
  const store = () => (opened ??= createFileVaultStore(path));
  return {
    get: async (id) => (await store()).get(id),
    set: async (id, sealed, ttlSec) => (await store()).set(id, sealed, ttlSec),
    delete: async (id) => (await store()).delete(id),
    ids: async (prefix, limit) => (await store()).ids(prefix, limit),
  };
}

export function createGatewayUserOAuth(config: GatewayConfig, logger: Logger, cluster: Cluster | undefined): GatewayUserOAuth | undefined {
  const settings = config.oauth;
  if (settings === undefined) return undefined;
  const store = cluster !== undefined && config.cluster !== undefined ? createRedisVaultStore(cluster.redis, config.cluster.redis.keyPrefix) : lazyFileStore(settings.vaultFile);
  let listening = `http://127.0.0.1:${config.listen.port}`;
  const baseUrl = () => settings.publicUrl ?? config.auth?.publicUrl?.replace(/\/$/, '') ?? listening;
  const client = createUserOAuth({ vault: createVault(deriveVaultKeys(settings.key), store), logger, baseUrl, clientName: settings.clientName, consentTtlSec: settings.consentTtlSec });
  return {
    client,
    clientName: settings.clientName,
    baseUrl,
    listeningAt(url) {
      listening = url;
    },
  };
}
