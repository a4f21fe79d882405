/**
 * lorem-ipsum-generator: placeholder text by words, sentences or paragraphs.
 * lorem-ipsum's Generator (MIT) picks the words and builds the sentences;
 * a seeded mulberry32 PRNG makes a given seed always give the same text.
 */
import { Generator } from 'lorem-ipsum';
import { type CheckIssue, defineTool, invalidMany, type Static, StrictObject, Type, type Unchecked } from '../../sdk/index.js';

type Unit = 'words' | 'sentences' | 'paragraphs';

const MAX_COUNT: Record<Unit, number> = { words: 10_000, sentences: 1_000, paragraphs: 100 };
/** The most words a request may ask for in the worst case (count x the maxima), about 350 KB of text. */
const MAX_WORDS = 50_000;
const DEFAULT_WPS = { min: 5, max: 15 };
const DEFAULT_SPP = { min: 3, max: 7 };
const LOREM = ['Lorem', 'ipsum', 'dolor', 'sit', 'amet'] as const;
const UINT32_MAX = 4_294_967_295;
/** The library's word list has one capitalised entry ("Lorem"); lower-case it so it does not appear capitalised mid-sentence. */
const WORDS = new Generator().words.map((w) => w.toLowerCase());

/** mulberry32: a tiny, well-distributed 32-bit PRNG (public domain). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Make the first sentence open with "Lorem ipsum dolor sit amet", keeping its word count. */
function loremSentence(sentence: string): string {
  const words = sentence.slice(0, -1).split(' ');
  const n = Math.min(words.length, LOREM.length);
  for (let i = 0; i < n; i++) words[i] = LOREM[i]!;
  if (words.length > LOREM.length) words[LOREM.length - 1] += ',';
  return `${words.join(' ')}.`;
}

const Bounds = (what: string, per: string, min: number, max: number, def: { min: number; max: number }) =>
  Type.Optional(StrictObject({
    min: Type.Optional(Type.Integer({ minimum: min, maximum: max, description: `Fewest ${what} per ${per} (default ${def.min}).` })),
    max: Type.Optional(Type.Integer({ minimum: min, maximum: max, description: `Most ${what} per ${per} (default ${def.max}).` })),
  }, { description: `How many ${what} each ${per} has, chosen at random between min and max (${min}..${max}).` }));

const UnitSchema = Type.Union([Type.Literal('words'), Type.Literal('sentences'), Type.Literal('paragraphs')]);
const FormatSchema = Type.Union([Type.Literal('plain'), Type.Literal('html')]);

const LoremRequest = StrictObject({
  unit: Type.Union([Type.Literal('words'), Type.Literal('sentences'), Type.Literal('paragraphs')], { default: 'paragraphs', description: 'What count counts.' }),
  count: Type.Integer({ minimum: 1, maximum: MAX_COUNT.words, default: 3, description: 'How many units: words 1..10000, sentences 1..1000, paragraphs 1..100.' }),
  format: Type.Union([Type.Literal('plain'), Type.Literal('html')], { default: 'plain', description: 'plain text, or HTML <p> elements.' }),
  start_with_lorem: Type.Boolean({ default: true, description: 'Begin with "Lorem ipsum dolor sit amet" (fewer words if the first sentence is shorter).' }),
  seed: Type.Optional(Type.Integer({ minimum: 0, maximum: UINT32_MAX, description: 'Seed for reproducible text (0..4294967295). Omit for a random one.' })),
  words_per_sentence: Bounds('words', 'sentence', 1, 100, DEFAULT_WPS),
  sentences_per_paragraph: Bounds('sentences', 'paragraph', 1, 50, DEFAULT_SPP),
});

/**
 * What the schema cannot check: count by unit, min over max, the worst case
 * in words. The validate stage runs it over the fields that passed the
 * schema (so one 400 names every problem); run() again, as a guard.
 */
function problems(i: Unchecked<Static<typeof LoremRequest>>): CheckIssue[] {
  const issues: CheckIssue[] = [];
  const { unit, count } = i;
  if (unit !== undefined && count !== undefined && count > MAX_COUNT[unit]) issues.push({ field: 'count', message: `must be at most ${MAX_COUNT[unit]} for unit "${unit}"` });
  const wps = { ...DEFAULT_WPS, ...i.words_per_sentence };
  const spp = { ...DEFAULT_SPP, ...i.sentences_per_paragraph };
  if (wps.min > wps.max) issues.push({ field: 'words_per_sentence', message: `min (${wps.min}) is greater than max (${wps.max})` });
  if (spp.min > spp.max) issues.push({ field: 'sentences_per_paragraph', message: `min (${spp.min}) is greater than max (${spp.max})` });
  if (issues.length === 0 && unit !== undefined && count !== undefined) {
    const worst = unit === 'words' ? count : unit === 'sentences' ? count * wps.max : count * spp.max * wps.max;
    if (worst > MAX_WORDS) {
      issues.push({ field: 'count', message: `could produce up to ${worst} words, over the ${MAX_WORDS} limit; lower count or the per-sentence/per-paragraph maxima` });
    }
  }
  return issues;
}

export default defineTool({
  name: 'tool-lorem-ipsum-generator',
  slug: 'lorem-ipsum-generator',
  summary: 'Generate lorem ipsum placeholder text by words, sentences or paragraphs, reproducibly with a seed.',
  description:
    'Generates classic lorem ipsum text. Plain paragraphs are separated by a blank line; html wraps each paragraph ' +
    '(or the whole text for words and sentences) in <p>...</p>, one per line. The same seed with the same options always ' +
    'gives the same text; without a seed a random one is chosen and returned so the text can be reproduced. ' +
    `A request whose worst case (count x sentences x words) exceeds ${MAX_WORDS} words is refused.`,
  request: LoremRequest,
  response: Type.Object({
    text: Type.String({ description: 'The generated text.' }),
    paragraphs: Type.Optional(Type.Array(Type.String(), { description: 'Each paragraph as plain text (unit paragraphs only).' })),
    unit: UnitSchema,
    count: Type.Integer(),
    format: FormatSchema,
    seed: Type.Integer({ description: 'The seed used; send it back to get the same text.' }),
    word_count: Type.Integer({ description: 'Words in the text (HTML tags not counted).' }),
    character_count: Type.Integer({ description: 'Characters in text, tags and separators included.' }),
  }),
  example: {
    request: { unit: 'sentences', count: 2, format: 'plain', start_with_lorem: true, seed: 42 },
    response: {
      text: 'Lorem ipsum dolor sit amet, dolore incididunt consequat mollit reprehenderit excepteur. Aliquip dolore adipisicing laboris aliquip quis fugiat ad laborum nisi in cupidatat eiusmod.',
      unit: 'sentences',
      count: 2,
      format: 'plain',
      seed: 42,
      word_count: 24,
      character_count: 180,
    },
  },
  check: problems,
  run(input) {
    const issues = problems(input);
    if (issues.length > 0) invalidMany(issues);
    const { unit, count, format, start_with_lorem, seed: givenSeed, words_per_sentence, sentences_per_paragraph } = input;
    const wps = { ...DEFAULT_WPS, ...words_per_sentence };
    const spp = { ...DEFAULT_SPP, ...sentences_per_paragraph };

    const seed = givenSeed ?? Math.floor(Math.random() * (UINT32_MAX + 1));
    const gen = new Generator({ random: mulberry32(seed), words: WORDS, wordsPerSentence: wps, sentencesPerParagraph: spp });
    const sentence = () => gen.generateRandomSentence();
    const wrap = (s: string) => (format === 'html' ? `<p>${s}</p>` : s);

    let text: string;
    let paragraphs: string[] | undefined;
    let words: number;
    if (unit === 'words') {
      const list = gen.generateRandomWords(count).split(' ');
      if (start_with_lorem) for (let i = 0; i < Math.min(count, LOREM.length); i++) list[i] = LOREM[i]!;
      words = list.length;
      text = wrap(list.join(' '));
    } else if (unit === 'sentences') {
      const list = Array.from({ length: count }, sentence);
      if (start_with_lorem) list[0] = loremSentence(list[0]!);
      words = list.reduce((n, s) => n + s.split(' ').length, 0);
      text = wrap(list.join(' '));
    } else {
      const groups = Array.from({ length: count }, () =>
        Array.from({ length: gen.generateRandomInteger(spp.min, spp.max) }, sentence));
      if (start_with_lorem) groups[0]![0] = loremSentence(groups[0]![0]!);
      paragraphs = groups.map((g) => g.join(' '));
      words = groups.reduce((n, g) => n + g.reduce((m, s) => m + s.split(' ').length, 0), 0);
      text = format === 'html' ? paragraphs.map(wrap).join('\n') : paragraphs.join('\n\n');
    }
    return {
      text,
      ...(paragraphs ? { paragraphs } : {}),
      unit,
      count,
      format,
      seed,
      word_count: words,
      character_count: text.length,
    };
  },
});
