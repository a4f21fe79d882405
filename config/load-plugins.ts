/**
 * Loads the plugin modules named in SCOUR_PLUGINS. A module exports its
 * plugin (or an array of plugins) as `default` or as `plugins`; each must be
 * an object with a string `name` and `kind` (the registry checks the rest at
 * boot). Paths are resolved from the working directory.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PluginBase } from '../core/plugin.js';
import { ConfigError } from './env.js';

const isPlugin = (p: unknown): p is PluginBase =>
  typeof p === 'object' && p !== null && typeof (p as PluginBase).name === 'string' && typeof (p as PluginBase).kind === 'string';

export async function loadPluginModules(paths: readonly string[], cwd = process.cwd()): Promise<PluginBase[]> {
  const out: PluginBase[] = [];
  const issues: string[] = [];
  for (const p of paths) {
    const file = resolve(cwd, p);
    let mod: Record<string, unknown>;
    try {
      mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (e) {
      issues.push(`SCOUR_PLUGINS: cannot load ${p}: ${(e as Error).message}`);
      continue;
    }
    const exported = mod.default ?? mod.plugins;
    const list = Array.isArray(exported) ? exported : [exported];
    if (exported === undefined || list.length === 0 || !list.every(isPlugin)) {
      issues.push(`SCOUR_PLUGINS: ${p} must export a plugin (or an array of plugins) as default or as "plugins"`);
      continue;
    }
    out.push(...list);
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return out;
}
