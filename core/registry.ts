/**
 * The plugin registry: refuses bad names, duplicates, unknown kinds, missing
 * dependencies and cycles when the app boots, each with a coded error, and
 * answers lookups by name and kind afterwards.
 */
import { PLUGIN_KINDS, type AnyPlugin, type OperationPlugin, type PluginBase, type PluginKind, type PluginLookup, type ToolPlugin } from './plugin.js';

export type PluginErrorCode =
  | 'PLUGIN_INVALID_NAME'
  | 'PLUGIN_INVALID_KIND'
  | 'PLUGIN_DUPLICATE'
  | 'PLUGIN_MISSING_DEPENDENCY'
  | 'PLUGIN_DEPENDENCY_CYCLE'
  | 'PLUGIN_INVALID'
  | 'PLUGIN_REGISTRY_SEALED';

export class PluginError extends Error {
  override readonly name = 'PluginError';
  constructor(readonly code: PluginErrorCode, message: string) {
    super(`${code}: ${message}`);
  }
}

const NAME = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

export class PluginRegistry implements PluginLookup {
  private readonly plugins = new Map<string, AnyPlugin>();
  private order: AnyPlugin[] | undefined;

  register(plugin: PluginBase): this {
    if (this.order) throw new PluginError('PLUGIN_REGISTRY_SEALED', `cannot register "${String(plugin?.name)}" after boot`);
    if (typeof plugin !== 'object' || plugin === null) throw new PluginError('PLUGIN_INVALID', 'a plugin must be an object');
    if (typeof plugin.name !== 'string' || !NAME.test(plugin.name)) {
      throw new PluginError('PLUGIN_INVALID_NAME', `plugin name ${JSON.stringify(plugin.name)} must be kebab-case (a-z, 0-9, -)`);
    }
    if (!PLUGIN_KINDS.includes(plugin.kind)) {
      throw new PluginError('PLUGIN_INVALID_KIND', `plugin "${plugin.name}" has unknown kind ${JSON.stringify(plugin.kind)}; expected one of ${PLUGIN_KINDS.join(', ')}`);
    }
    if (this.plugins.has(plugin.name)) {
      throw new PluginError('PLUGIN_DUPLICATE', `plugin "${plugin.name}" is registered twice`);
    }
    if (plugin.dependsOn !== undefined && (!Array.isArray(plugin.dependsOn) || plugin.dependsOn.some((d) => typeof d !== 'string'))) {
      throw new PluginError('PLUGIN_INVALID', `plugin "${plugin.name}": dependsOn must be a list of plugin names`);
    }
    this.plugins.set(plugin.name, plugin as AnyPlugin);
    return this;
  }

  registerAll(plugins: Iterable<PluginBase>): this {
    for (const p of plugins) this.register(p);
    return this;
  }

  /** Validate dependencies and fix the start order (dependencies first). */
  seal(): readonly AnyPlugin[] {
    if (this.order) return this.order;
    for (const p of this.plugins.values()) {
      for (const dep of p.dependsOn ?? []) {
        if (!this.plugins.has(dep)) {
          throw new PluginError('PLUGIN_MISSING_DEPENDENCY', `plugin "${p.name}" depends on "${dep}", which is not registered`);
        }
      }
    }
    const order: AnyPlugin[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (p: AnyPlugin, path: string[]): void => {
      const s = state.get(p.name);
      if (s === 'done') return;
      if (s === 'visiting') {
        throw new PluginError('PLUGIN_DEPENDENCY_CYCLE', `dependency cycle: ${[...path, p.name].join(' -> ')}`);
      }
      state.set(p.name, 'visiting');
      for (const dep of p.dependsOn ?? []) visit(this.plugins.get(dep)!, [...path, p.name]);
      state.set(p.name, 'done');
      order.push(p);
    };
    for (const p of this.plugins.values()) visit(p, []);
    this.order = order;
    return order;
  }

  get(name: string): AnyPlugin | undefined {
    return this.plugins.get(name);
  }

  byKind(kind: 'operation'): readonly OperationPlugin[];
  byKind(kind: 'tool'): readonly ToolPlugin[];
  byKind(kind: PluginKind): readonly AnyPlugin[];
  byKind(kind: PluginKind): readonly unknown[] {
    return [...this.plugins.values()].filter((p) => p.kind === kind);
  }

  get size(): number {
    return this.plugins.size;
  }
}
