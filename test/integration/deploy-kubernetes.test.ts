/**
 * deploy/cluster/kubernetes/ is never applied here (no cluster runs in CI), so this test checks it
 * the two ways that matter: every manifest against the Kubernetes schemas (kubernetes-models, the
 * API's OpenAPI definitions), and every manifest against the others and the gateway: the ConfigMap's
 * config loads with the project's own loader in the environment the Deployment gives it (the
 * downward API, the Secret's keys), the container port is the config's port, the probe paths are
 * routes a real gateway answers 200, the Services and the budget select the pods, and the pod's
 * grace period covers the gateway's drain.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { isConfigError } from '../../src/config/config-error.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { startGateway } from '../../src/main.ts';
import { root } from '../support/cli.ts';
import { buildConfig, createTestLogger } from '../support/gateway.ts';
import { recorderServer } from '../support/recorder.ts';

const dir = join(root, 'deploy', 'cluster', 'kubernetes');
const models: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
};

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; spec?: any; data?: any; stringData?: any };
const manifests: Array<Manifest & { file: string }> = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((file) => parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((doc) => ({ ...(doc.toJS() as Manifest), file })));
const only = (kind: string, name?: string): Manifest => {
  const found = manifests.filter((m) => m.kind === kind && (name === undefined || m.metadata.name === name));
  expect(found, `${kind} ${name ?? ''}`).toHaveLength(1);
  return found[0] as Manifest;
};
const deployment = () => only('Deployment');
const pod = () => deployment().spec.template.spec;
const container = () => pod().containers[0];
const secret = () => only('Secret');
const configMap = () => only('ConfigMap');
const probes = () => [container().livenessProbe, container().readinessProbe, container().startupProbe].filter(Boolean);
const httpPort = () => container().ports.find((p: { name: string }) => p.name === 'http').containerPort as number;

/** What the pod's environment holds: the downward API's fields, plain values, the Secret's keys. */
function podEnv(secrets: Record<string, string>): Record<string, string> {
  const fields: Record<string, string> = { 'metadata.name': 'switchboard-6d8f9c7b5-x2x7q', 'status.podIP': '10.42.1.17' };
  const env: Record<string, string> = {};
  for (const entry of container().env) {
    const from = entry.valueFrom;
    if (entry.value !== undefined) env[entry.name] = entry.value;
    else if (from?.fieldRef) env[entry.name] = fields[from.fieldRef.fieldPath] ?? '';
    else if (from?.secretKeyRef) {
      expect(from.secretKeyRef.name, entry.name).toBe(secret().metadata.name);
      expect(Object.keys(secret().stringData), `${entry.name}: no such key in the Secret`).toContain(from.secretKeyRef.key);
      env[entry.name] = secrets[from.secretKeyRef.key] ?? secret().stringData[from.secretKeyRef.key];
    } else throw new Error(`unexpected env entry ${JSON.stringify(entry)}`);
  }
  return env;
}

/** Secrets as an operator makes them (secret.yaml's comment). */
const realSecrets = { 'api-key': randomBytes(24).toString('hex'), 'cluster-key': randomBytes(32).toString('base64') };

const temp = mkdtempSync(join(tmpdir(), 'switchboard-k8s-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** The ConfigMap's config, written where the pod mounts it, loaded by the gateway's own loader. */
async function loadPodConfig(env: Record<string, string>) {
  const args: string[] = container().args;
  const path = args[args.indexOf('--config') + 1] ?? '';
  const mount = container().volumeMounts.find((m: { mountPath: string }) => path.startsWith(`${m.mountPath}/`));
  const volume = pod().volumes.find((v: { name: string }) => v.name === mount?.name);
  expect(volume?.configMap?.name, `${path} is not mounted from the ConfigMap`).toBe(configMap().metadata.name);
  const text = configMap().data[path.slice(mount.mountPath.length + 1)] as string;
  expect(text, `the ConfigMap has no ${path}`).toBeTypeOf('string');
  const file = join(temp, 'switchboard.yaml');
  writeFileSync(file, text);
  return loadConfigFile(file, { env });
}

describe('deploy/cluster/kubernetes', () => {
  it('holds the kinds a cluster needs, each valid against the Kubernetes schema', () => {
    const kinds = manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort();
    expect(kinds).toEqual([
      'ConfigMap/switchboard-config',
      'Deployment/switchboard',
      'HorizontalPodAutoscaler/switchboard',
      'PodDisruptionBudget/switchboard',
      'Secret/switchboard-secrets',
      'Service/switchboard',
      'Service/switchboard-replicas',
    ]);
    for (const { file, ...manifest } of manifests) {
      const Model = models[`${manifest.apiVersion}/${manifest.kind}`];
      expect(Model, `${file}: no model for ${manifest.apiVersion} ${manifest.kind}`).toBeDefined();
      if (Model !== undefined) expect(() => new Model(manifest as never).validate(), file).not.toThrow();
    }
  });

  it('the schema check catches a wrong manifest (a port that is not a number)', () => {
    const service = structuredClone(only('Service', 'switchboard'));
    service.spec.ports[0].port = 'eighty';
    expect(() => new Service(service as never).validate()).toThrow(/port/);
  });

  it("the ConfigMap's config loads with the project's loader in the pod's environment, on the container port", async () => {
    const env = podEnv(realSecrets);
    const config = await loadPodConfig(env);
    expect(config.listen).toEqual({ host: '0.0.0.0', port: httpPort() });
    expect(config.auth, 'bound beyond loopback: client authentication on').toBeDefined();
    // Needs gateway.cluster in the schema (issue 24 item 1).
    const cluster = (config as { cluster?: { replicaId?: string; advertiseUrl?: string; keys?: readonly string[] } }).cluster;
    expect(cluster?.replicaId).toBe(env.POD_NAME);
    expect(cluster?.advertiseUrl).toBe(`http://${env.POD_IP}:${httpPort()}`);
    expect(cluster?.keys?.[0]).toBe(realSecrets['cluster-key']);
  });

  it("the Secret's placeholders are refused: applied unchanged, no replica starts", async () => {
    const error = await loadPodConfig(podEnv({})).catch((err: unknown) => err);
    expect(isConfigError(error), String(error)).toBe(true);
    const paths = isConfigError(error) ? error.issues.map((i) => i.path) : [];
    expect(paths.some((p) => p.includes('apiKeys'))).toBe(true);
    expect(paths.some((p) => p.includes('cluster.keys'))).toBe(true);
  });

  it('the probes ask /healthz (alive) and /readyz (in rotation) on the http port, routes a real gateway answers', async () => {
    expect(container().livenessProbe.httpGet.path).toBe('/healthz');
    expect(container().readinessProbe.httpGet.path).toBe('/readyz');
    const gateway = await startGateway(buildConfig({ targets: { fx: recorderServer() } }), { logger: createTestLogger('silent', undefined) });
    try {
      for (const probe of probes()) {
        expect(probe.httpGet.port).toBe('http');
        const res = await fetch(new URL(probe.httpGet.path, gateway.url));
        expect(res.status, probe.httpGet.path).toBe(200);
      }
      // A path that is no route is not 200: the check above can fail.
      expect((await fetch(new URL('/ready', gateway.url))).status).toBe(404);
    } finally {
      await gateway.close();
    }
  });

  it('the pod outlives the drain: preStop pause + shutdownGraceMs < terminationGracePeriodSeconds', async () => {
    const config = await loadPodConfig(podEnv(realSecrets));
    const command: string[] = container().lifecycle.preStop.exec.command;
    expect(command[0]).toBe('sleep');
    const pauseMs = Number(command[1]) * 1000;
    expect(pauseMs + config.shutdownGraceMs).toBeLessThan(pod().terminationGracePeriodSeconds * 1000);
  });

  it('the Services, the budget and the autoscaler all point at these pods, with no affinity', () => {
    const labels = deployment().spec.template.metadata.labels;
    expect(deployment().spec.replicas).toBe(3);
    const selects = (selector: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
    expect(selects(deployment().spec.selector.matchLabels)).toBe(true);
    const service = only('Service', 'switchboard');
    const replicas = only('Service', 'switchboard-replicas');
    for (const s of [service, replicas]) {
      expect(selects(s.spec.selector), s.metadata.name).toBe(true);
      expect(s.spec.ports.map((p: { targetPort: unknown }) => p.targetPort)).toEqual(['http']);
    }
    expect(service.spec.sessionAffinity ?? 'None').toBe('None');
    // Replica to replica: straight to the pods, draining ones included (they still serve their sessions).
    expect(replicas.spec.clusterIP).toBe('None');
    expect(replicas.spec.publishNotReadyAddresses).toBe(true);
    expect(replicas.spec.ports[0].port).toBe(httpPort());
    expect(selects(only('PodDisruptionBudget').spec.selector.matchLabels)).toBe(true);
    const hpa = only('HorizontalPodAutoscaler').spec;
    expect(hpa.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: deployment().metadata.name });
    expect(hpa.minReplicas).toBe(deployment().spec.replicas);
    // The autoscaler scales on CPU against a request: without one it has nothing to compare with.
    expect(container().resources.requests.cpu).toBeDefined();
  });
});
