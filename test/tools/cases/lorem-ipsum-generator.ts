/** Case table for the lorem-ipsum-generator tool: run in process (test/tools) and over both HTTP adapters (test/http). */
import { expect } from 'vitest';
import type { ToolCaseFile } from '../../support/tool-harness.js';

/** The classic lorem ipsum vocabulary (lorem-ipsum's list), lower case. */
const VOCAB = new Set(('ad adipisicing aliqua aliquip amet anim aute cillum commodo consectetur consequat culpa cupidatat deserunt do dolor dolore ' +
  'duis ea eiusmod elit enim esse est et eu ex excepteur exercitation fugiat id in incididunt ipsum irure labore laboris laborum lorem magna ' +
  'minim mollit nisi non nostrud nulla occaecat officia pariatur proident qui quis reprehenderit sint sit sunt tempor ullamco ut velit veniam voluptate').split(' '));

const wordsOf = (text: string) => text.replace(/<\/?p>/g, ' ').split(/[\s.,]+/).filter(Boolean);
const allLorem = (text: string) => {
  for (const w of wordsOf(text)) expect(VOCAB.has(w.toLowerCase()), w).toBe(true);
};
/** The whole body, less the request_id the HTTP layer adds. */
const whole = (b: any) => { const { request_id: _id, ...rest } = b; return rest; };
const sentencesOf = (text: string) => text.replace(/<\/?p>/g, '').split(/(?<=\.)\s+/).filter(Boolean);

export default {
  slug: 'lorem-ipsum-generator',
  cases: [
    {
      name: 'defaults: three plain paragraphs starting with Lorem ipsum',
      body: {},
      status: 200,
      check: (b) => {
        expect(b.unit).toBe('paragraphs');
        expect(b.count).toBe(3);
        expect(b.format).toBe('plain');
        expect(b.paragraphs).toHaveLength(3);
        expect(b.text).toBe(b.paragraphs.join('\n\n'));
        expect(b.text.startsWith('Lorem ipsum dolor sit amet')).toBe(true);
        expect(Number.isInteger(b.seed)).toBe(true);
        expect(b.word_count).toBe(wordsOf(b.text).length);
        expect(b.character_count).toBe(b.text.length);
        allLorem(b.text);
        for (const p of b.paragraphs) {
          const n = sentencesOf(p).length;
          expect(n).toBeGreaterThanOrEqual(3);
          expect(n).toBeLessThanOrEqual(7);
        }
      },
    },
    {
      name: 'seed 42, two sentences: pinned text',
      body: { unit: 'sentences', count: 2, seed: 42 },
      status: 200,
      check: (b) => expect(whole(b)).toEqual({
        text: 'Lorem ipsum dolor sit amet, dolore incididunt consequat mollit reprehenderit excepteur. Aliquip dolore adipisicing laboris aliquip quis fugiat ad laborum nisi in cupidatat eiusmod.',
        unit: 'sentences', count: 2, format: 'plain', seed: 42, word_count: 24, character_count: 180,
      }),
    },
    { name: 'three words start with Lorem ipsum dolor', body: { unit: 'words', count: 3, seed: 7 }, status: 200, check: (b) => { expect(b.text).toBe('Lorem ipsum dolor'); expect(b.word_count).toBe(3); expect(b.paragraphs).toBeUndefined(); } },
    { name: 'one word', body: { unit: 'words', count: 1 }, status: 200, check: (b) => expect(b.text).toBe('Lorem') },
    {
      name: 'words without the lorem opening are lower case vocabulary',
      body: { unit: 'words', count: 200, start_with_lorem: false, seed: 9 },
      status: 200,
      check: (b) => {
        const w = b.text.split(' ');
        expect(w).toHaveLength(200);
        expect(b.word_count).toBe(200);
        for (const x of w) expect(VOCAB.has(x), x).toBe(true);
      },
    },
    {
      name: 'sentences honour words_per_sentence',
      body: { unit: 'sentences', count: 20, words_per_sentence: { min: 4, max: 6 }, seed: 11 },
      status: 200,
      check: (b) => {
        const s = sentencesOf(b.text);
        expect(s).toHaveLength(20);
        for (const x of s) {
          expect(x).toMatch(/^[A-Z][a-z]*(,? [a-z]+)*\.$/);
          const n = x.split(' ').length;
          expect(n).toBeGreaterThanOrEqual(4);
          expect(n).toBeLessThanOrEqual(6);
        }
        expect(b.text.startsWith('Lorem ipsum dolor sit amet')).toBe(true);
      },
    },
    { name: 'a three-word first sentence is "Lorem ipsum dolor."', body: { unit: 'sentences', count: 1, words_per_sentence: { min: 3, max: 3 } }, status: 200, check: (b) => expect(b.text).toBe('Lorem ipsum dolor.') },
    { name: 'a five-word first sentence is exactly the opening', body: { unit: 'sentences', count: 1, words_per_sentence: { min: 5, max: 5 } }, status: 200, check: (b) => expect(b.text).toBe('Lorem ipsum dolor sit amet.') },
    {
      name: 'html paragraphs: one <p> per line',
      body: { unit: 'paragraphs', count: 4, format: 'html', sentences_per_paragraph: { min: 2, max: 2 }, seed: 5 },
      status: 200,
      check: (b) => {
        const lines = b.text.split('\n');
        expect(lines).toHaveLength(4);
        for (const [i, l] of lines.entries()) expect(l).toBe(`<p>${b.paragraphs[i]}</p>`);
        for (const p of b.paragraphs) expect(sentencesOf(p)).toHaveLength(2);
        expect(b.character_count).toBe(b.text.length);
      },
    },
    { name: 'html sentences are one <p>', body: { unit: 'sentences', count: 3, format: 'html' }, status: 200, check: (b) => expect(b.text).toMatch(/^<p>Lorem ipsum dolor sit amet[^<]*<\/p>$/) },
    { name: 'html words are one <p>', body: { unit: 'words', count: 5, format: 'html' }, status: 200, check: (b) => { expect(b.text).toBe('<p>Lorem ipsum dolor sit amet</p>'); expect(b.word_count).toBe(5); } },
    { name: 'start_with_lorem false', body: { unit: 'sentences', count: 5, start_with_lorem: false, seed: 1 }, status: 200, check: (b) => { expect(b.text.startsWith('Lorem ipsum dolor sit amet')).toBe(false); allLorem(b.text); } },
    { name: 'maximum words', body: { unit: 'words', count: 10_000 }, status: 200, check: (b) => expect(b.word_count).toBe(10_000) },
    { name: 'maximum paragraphs with default bounds', body: { unit: 'paragraphs', count: 100 }, status: 200, check: (b) => expect(b.paragraphs).toHaveLength(100) },
    { name: 'seed 0 and the largest seed work', body: { unit: 'words', count: 5, seed: 4_294_967_295 }, status: 200, check: (b) => expect(b.seed).toBe(4_294_967_295) },
    { name: 'seed 0 is kept', body: { unit: 'words', count: 5, seed: 0 }, status: 200, check: (b) => expect(b.seed).toBe(0) },

    // hostile and invalid
    { name: 'unknown unit', body: { unit: 'lines' }, status: 400, fields: ['unit'] },
    { name: 'count zero', body: { count: 0 }, status: 400, fields: ['count'] },
    { name: 'negative count', body: { count: -3 }, status: 400, fields: ['count'] },
    { name: 'fractional count', body: { count: 2.5 }, status: 400, fields: ['count'] },
    { name: 'count as a string', body: { count: '3' }, status: 400, fields: ['count'] },
    { name: 'huge count', body: { unit: 'words', count: 1e12 }, status: 400, fields: ['count'] },
    { name: 'too many sentences', body: { unit: 'sentences', count: 1001 }, status: 400, fields: ['count'] },
    { name: 'too many paragraphs', body: { unit: 'paragraphs', count: 101 }, status: 400, fields: ['count'] },
    { name: 'worst case over the word limit', body: { unit: 'paragraphs', count: 100, sentences_per_paragraph: { max: 50 }, words_per_sentence: { max: 100 } }, status: 400, fields: ['count'] },
    { name: 'unknown format', body: { format: 'markdown' }, status: 400, fields: ['format'] },
    { name: 'start_with_lorem as a string', body: { start_with_lorem: 'yes' }, status: 400, fields: ['start_with_lorem'] },
    { name: 'negative seed', body: { seed: -1 }, status: 400, fields: ['seed'] },
    { name: 'seed beyond 32 bits', body: { seed: 4_294_967_296 }, status: 400, fields: ['seed'] },
    { name: 'fractional seed', body: { seed: 1.5 }, status: 400, fields: ['seed'] },
    { name: 'min greater than max', body: { words_per_sentence: { min: 10, max: 5 } }, status: 400, fields: ['words_per_sentence'] },
    { name: 'min above the default max', body: { sentences_per_paragraph: { min: 9 } }, status: 400, fields: ['sentences_per_paragraph'] },
    { name: 'words_per_sentence max out of range', body: { words_per_sentence: { max: 101 } }, status: 400, fields: ['words_per_sentence.max'] },
    { name: 'words_per_sentence min zero', body: { words_per_sentence: { min: 0 } }, status: 400, fields: ['words_per_sentence.min'] },
    { name: 'sentences_per_paragraph max out of range', body: { sentences_per_paragraph: { max: 51 } }, status: 400, fields: ['sentences_per_paragraph.max'] },
    { name: 'unknown field inside bounds', body: { words_per_sentence: { mn: 1 } }, status: 400, fields: ['words_per_sentence.mn'] },
    { name: 'bounds as an array', body: { words_per_sentence: [1, 2] }, status: 400, fields: ['words_per_sentence'] },
    { name: 'unknown field', body: { units: 'words' }, status: 400, fields: ['units'] },
    { name: '__proto__ field', body: JSON.parse('{"__proto__": {"count": 5}}'), status: 400, fields: ['__proto__'] },
  ],
} satisfies ToolCaseFile;
