/**
 * The composition root: the one place that chooses adapters and wires them
 * (tsyringe holds the static graph; nothing resolves from it per request).
 * `createScour` builds an instance; `start` listens, `stop` drains and
 * releases everything in reverse order.
 */
import 'reflect-metadata';
import { mkdirSync } from 'node:fs';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { clientQuotaStage } from '../core/stages/client-quota.js';
import { validateStage } from '../core/stages/validate.js';
import type { PluginBase, PluginHost, Route } from '../core/plugin.js';
import type { Clock, IdGenerator, Logger, Metrics, RateLimiter } from '../core/ports.js';
import { PluginRegistry } from '../core/registry.js';
import type { SchemaCompiler } from '../core/schema.js';
import type { StageKit } from '../core/stages.js';
import { HttpApp } from '../adapters/http/shared/app.js';
import type { HttpServer } from '../adapters/http/shared/server.js';
import { NodeHttpServer } from '../adapters/http/node/index.js';
import { UwsServer, uwsIsNative } from '../adapters/http/uws/index.js';
import { HyperIdGenerator, systemClock } from '../adapters/ids/hyperid.js';
import { MemoryRateLimiter } from '../adapters/limiter/memory/index.js';
import { createLogger } from '../adapters/logging/pino.js';
import { PrometheusMetrics } from '../adapters/metrics/prometheus.js';
import { AjvSchemaCompiler } from '../adapters/validation/json-schema.js';
import { DEFAULTS, type Settings } from './env.js';
import { builtinPlugins } from './plugins.js';
import { TOKENS } from './tokens.js';
import { VERSION } from './version.js';

export interface ScourOptions {
  readonly settings?: Partial<Settings>;
  /** Extra plugins (custom extractors, tools, operations). */
  readonly plugins?: readonly PluginBase[];
  /** Replace the built-in set entirely (tests of the registry). */
  readonly replaceBuiltins?: boolean;
  readonly logger?: Logger;
  readonly clock?: Clock;
}

export interface Scour {
  readonly settings: Settings;
  readonly container: DependencyContainer;
  readonly registry: PluginRegistry;
  readonly app: HttpApp;
  readonly server: HttpServer;
  readonly logger: Logger;
  start(): Promise<{ host: string; port: number; url: string }>;
  stop(): Promise<boolean>;
}

export async function createScour(options: ScourOptions = {}): Promise<Scour> {
  const settings: Settings = { ...DEFAULTS, ...options.settings };
  const c = rootContainer.createChildContainer();

  c.register(TOKENS.Settings, { useValue: settings });
  c.register(TOKENS.Logger, { useValue: options.logger ?? createLogger(settings.logLevel) });
  c.register(TOKENS.Clock, { useValue: options.clock ?? systemClock });
  c.register(TOKENS.Ids, { useValue: new HyperIdGenerator() });
  c.register(TOKENS.Metrics, { useValue: new PrometheusMetrics() });
  c.register(TOKENS.SchemaCompiler, { useValue: new AjvSchemaCompiler() });
  c.register(TOKENS.RateLimiter, { useValue: new MemoryRateLimiter(c.resolve<Clock>(TOKENS.Clock)) });

  const logger = c.resolve<Logger>(TOKENS.Logger);
  const registry = new PluginRegistry();
  registry.registerAll(options.replaceBuiltins ? [] : builtinPlugins);
  registry.registerAll(options.plugins ?? []);
  const order = registry.seal();
  c.register(TOKENS.Registry, { useValue: registry });

  const compiler = c.resolve<SchemaCompiler>(TOKENS.SchemaCompiler);
  const stages: StageKit = {
    clientQuota: clientQuotaStage(c.resolve<RateLimiter>(TOKENS.RateLimiter), settings.toolsRateLimit, settings.upgradeUrl),
    validate: (schema) => validateStage(compiler.compile(schema)),
  };
  c.register(TOKENS.Stages, { useValue: stages });

  const started: PluginBase[] = [];
  const stopPlugins = async () => {
    for (const p of started.reverse()) {
      try {
        await p.stop?.();
      } catch (e) {
        logger.error({ plugin: p.name, err: String(e) }, 'plugin stop failed');
      }
    }
  };
  try {
    for (const p of order) {
      await p.start?.();
      started.push(p);
    }
  } catch (e) {
    await stopPlugins();
    throw e;
  }

  const routes: Route<any, any>[] = [];
  const host: PluginHost = {
    registry,
    stages,
    settings: { upgradeUrl: settings.upgradeUrl, version: VERSION },
    metrics: c.resolve<Metrics>(TOKENS.Metrics),
    allRoutes: () => routes,
  };
  for (const op of registry.byKind('operation')) routes.push(...op.routes(host));

  const app = new HttpApp({
    routes,
    compiler,
    ids: c.resolve<IdGenerator>(TOKENS.Ids),
    clock: c.resolve<Clock>(TOKENS.Clock),
    metrics: c.resolve<Metrics>(TOKENS.Metrics),
    logger,
    bodyLimit: settings.bodyLimit,
  });
  c.register(TOKENS.HttpApp, { useValue: app });

  if (settings.httpAdapter === 'uws' && !uwsIsNative()) {
    logger.warn('uWebSockets.js native binary did not load for this Node ABI; using its slow pure-JS fallback. Use Node 20 or SCOUR_HTTP_ADAPTER=node.');
  }
  const server: HttpServer = settings.httpAdapter === 'node'
    ? new NodeHttpServer(app, { trustProxy: settings.trustProxy })
    : new UwsServer(app, { trustProxy: settings.trustProxy });
  c.register(TOKENS.HttpServer, { useValue: server });

  let stopped = false;
  return {
    settings, container: c, registry, app, server, logger,
    async start() {
      mkdirSync(settings.dataDir, { recursive: true });
      const bound = await server.listen(settings.host, settings.port);
      const shownHost = bound.host === '0.0.0.0' || bound.host === '::' ? '127.0.0.1' : bound.host;
      return { ...bound, url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${bound.port}` };
    },
    async stop() {
      if (stopped) return true;
      stopped = true;
      const drained = await server.close(settings.shutdownTimeoutMs);
      await stopPlugins();
      c.resolve<MemoryRateLimiter>(TOKENS.RateLimiter).dispose();
      return drained;
    },
  };
}
