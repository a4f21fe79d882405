/**
 * The README and docs/developer-tools.md stay true: the README starts with
 * the two commands, the tools section is the tool folders' fragments, and
 * every tool is documented.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { builtinTools } from '../../plugins/tools/index.js';
// @ts-expect-error plain ESM script without types
import { replaceBetween, toolsSection } from '../../scripts/docs-tools.mjs';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const tools = readFileSync(new URL('../../docs/developer-tools.md', import.meta.url), 'utf8');

describe('README', () => {
  it('starts with the two commands: start and test', () => {
    const firstBlock = readme.slice(readme.indexOf('```sh'), readme.indexOf('```', readme.indexOf('```sh') + 5));
    expect(firstBlock).toContain('npm start');
    expect(firstBlock).toContain('npm test');
  });

  it('has the generated tools section up to date (run npm run docs:tools)', () => {
    expect(replaceBetween(tools, 'tools', toolsSection())).toBe(tools);
  });

  it.each(builtinTools.map((t) => [t.slug] as const))('documents %s with a curl example', (slug) => {
    const at = tools.indexOf(`### ${slug}`);
    expect(at, `docs/developer-tools.md has no "### ${slug}" section`).toBeGreaterThan(0);
    const section = tools.slice(at);
    expect(section).toContain(`/v1/tools/${slug}`);
  });
});
