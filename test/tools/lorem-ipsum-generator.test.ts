/** Reproducibility of lorem-ipsum-generator: the same seed and options always give the same text. */
import { describe, expect, it } from 'vitest';
import tool from '../../plugins/tools/lorem-ipsum-generator/index.js';
import { runTool } from '../support/tool-harness.js';

describe('lorem-ipsum-generator seeds', () => {
  const bodies = [
    { unit: 'paragraphs', count: 5, seed: 123 },
    { unit: 'sentences', count: 40, seed: 123, format: 'html' },
    { unit: 'words', count: 500, seed: 123, start_with_lorem: false },
  ];

  it.each(bodies.map((b) => [b.unit, b] as const))('same seed, same %s', async (_u, body) => {
    const a = await runTool(tool, body);
    const b = await runTool(tool, body);
    expect(a.status).toBe(200);
    expect(b.body).toEqual(a.body);
  });

  it('different seeds give different text', async () => {
    const a = await runTool(tool, { unit: 'sentences', count: 10, seed: 1 });
    const b = await runTool(tool, { unit: 'sentences', count: 10, seed: 2 });
    expect(a.body.text).not.toBe(b.body.text);
  });

  it('without a seed, the returned seed reproduces the text', async () => {
    const a = await runTool(tool, { unit: 'paragraphs', count: 2 });
    const b = await runTool(tool, { unit: 'paragraphs', count: 2, seed: a.body.seed });
    expect(b.body.text).toBe(a.body.text);
  });

  it('unseeded calls differ', async () => {
    const texts = new Set<string>();
    for (let i = 0; i < 5; i++) texts.add((await runTool(tool, { unit: 'words', count: 50, start_with_lorem: false })).body.text);
    expect(texts.size).toBeGreaterThan(1);
  });

  it('word counts stay within the bounds for many seeds', async () => {
    for (let seed = 0; seed < 50; seed++) {
      const r = await runTool(tool, { unit: 'paragraphs', count: 3, seed, words_per_sentence: { min: 2, max: 4 }, sentences_per_paragraph: { min: 1, max: 3 } });
      expect(r.body.paragraphs).toHaveLength(3);
      for (const p of r.body.paragraphs as string[]) {
        const sentences = p.split(/(?<=\.) /);
        expect(sentences.length).toBeGreaterThanOrEqual(1);
        expect(sentences.length).toBeLessThanOrEqual(3);
        for (const s of sentences) {
          const n = s.split(' ').length;
          expect(n).toBeGreaterThanOrEqual(2);
          expect(n).toBeLessThanOrEqual(4);
        }
      }
    }
  });
});
