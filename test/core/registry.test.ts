/** The plugin registry: literal names, dependency order, and every coded refusal. */
import { describe, expect, it } from 'vitest';
import { definePlugin } from '../../core/plugin.js';
import { PluginError, PluginRegistry } from '../../core/registry.js';

const p = (name: string, dependsOn: string[] = [], kind: 'extractor' | 'tool' = 'extractor') => definePlugin({ name, kind, dependsOn });

function codeOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(PluginError);
    return (e as PluginError).code;
  }
  return undefined;
}

describe('plugin registry', () => {
  it('keeps literal names and kinds', () => {
    const x = definePlugin({ name: 'extractor-price', kind: 'extractor' });
    const name: 'extractor-price' = x.name;
    expect(name).toBe('extractor-price');
  });

  it('orders plugins so dependencies start first', () => {
    const r = new PluginRegistry().registerAll([p('c', ['b']), p('b', ['a']), p('a')]);
    expect(r.seal().map((x) => x.name)).toEqual(['a', 'b', 'c']);
  });

  it.each([
    ['PLUGIN_DUPLICATE', () => new PluginRegistry().registerAll([p('a'), p('a')])],
    ['PLUGIN_MISSING_DEPENDENCY', () => new PluginRegistry().registerAll([p('a', ['ghost'])]).seal()],
    ['PLUGIN_DEPENDENCY_CYCLE', () => new PluginRegistry().registerAll([p('a', ['b']), p('b', ['c']), p('c', ['a'])]).seal()],
    ['PLUGIN_INVALID_NAME', () => new PluginRegistry().register(p('Not Kebab'))],
    ['PLUGIN_INVALID_NAME', () => new PluginRegistry().register({ name: '', kind: 'tool' })],
    ['PLUGIN_INVALID_KIND', () => new PluginRegistry().register({ name: 'x', kind: 'gadget' as never })],
    ['PLUGIN_INVALID', () => new PluginRegistry().register(null as never)],
    ['PLUGIN_INVALID', () => new PluginRegistry().register({ name: 'x', kind: 'tool', dependsOn: 'y' as never })],
    ['PLUGIN_REGISTRY_SEALED', () => { const r = new PluginRegistry(); r.seal(); r.register(p('late')); }],
  ])('refuses with %s', (code, f) => {
    expect(codeOf(f)).toBe(code);
  });

  it('names the missing dependency and the cycle in the message', () => {
    expect(() => new PluginRegistry().registerAll([p('extractor-a', ['fetcher-z'])]).seal()).toThrow(/"extractor-a" depends on "fetcher-z"/);
    expect(() => new PluginRegistry().registerAll([p('a', ['b']), p('b', ['a'])]).seal()).toThrow(/a -> b -> a/);
  });

  it('looks plugins up by kind and name', () => {
    const r = new PluginRegistry().registerAll([p('a'), p('t', [], 'tool')]);
    expect(r.byKind('tool').map((x) => x.name)).toEqual(['t']);
    expect(r.get('a')?.kind).toBe('extractor');
    expect(r.get('zzz')).toBeUndefined();
  });
});
