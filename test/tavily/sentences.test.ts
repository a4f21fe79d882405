/**
 * The quoted text of the Tavily-compatible search (plugins/operations/tavily/sentences.ts):
 * an answer and an advanced search's content are sentences of the results,
 * as they stand (white space collapsed), never written; an answer takes only
 * statements; both rank by query words held.
 */
import { describe, expect, it } from 'vitest';
import { extractiveAnswer, relevantChunks } from '../../plugins/operations/tavily/sentences.js';

const collapse = (s: string) => s.replace(/\s+/g, ' ');

describe('extractiveAnswer', () => {
  const texts = [
    'Solar panels convert sunlight into electricity. The efficiency of commercial solar panels reached 24 percent in 2024.',
    'Size solar panels by your yearly electricity use. Wind turbines need their gearboxes inspected twice a year.',
    'The efficiency of commercial solar panels reached 24 percent in 2024. Most   home\nbatteries hold between five and fifteen kilowatt hours of solar energy.',
  ];

  it('takes the statements holding the most query words, better-ranked results first on a tie, each once', () => {
    expect(extractiveAnswer(texts, ['solar', 'efficiency'], 2)).toBe(
      'The efficiency of commercial solar panels reached 24 percent in 2024. Solar panels convert sunlight into electricity.',
    );
  });

  it('every sentence of an answer is in a result, white space aside', () => {
    const answer = extractiveAnswer(texts, ['solar', 'batteries', 'efficiency'], 5)!;
    const corpus = texts.map(collapse).join('\n');
    for (const s of answer.split(/(?<=\.) (?=[A-Z])/)) expect(corpus).toContain(s);
    expect(answer).toContain('Most home batteries hold between five and fifteen kilowatt hours of solar energy.');
  });

  it('instructions, fragments and sentences without a query word are never an answer', () => {
    expect(extractiveAnswer(['Size solar panels by your yearly electricity use.'], ['solar'], 2)).toBeNull();
    expect(extractiveAnswer(['solar panels, cheap and…'], ['solar'], 2)).toBeNull();
    expect(extractiveAnswer(texts, ['quokka'], 2)).toBeNull();
    expect(extractiveAnswer(texts, [], 2)).toBeNull();
    expect(extractiveAnswer([], ['solar'], 2)).toBeNull();
  });

  it('stays within the sentence count asked', () => {
    expect(extractiveAnswer(texts, ['solar'], 1)!.split('. ').length).toBe(1);
  });
});

describe('relevantChunks', () => {
  const page = [
    '# Solar panel efficiency',
    '',
    'Solar panels convert sunlight into electricity with photovoltaic cells.',
    '',
    'Installers say that cheaper panels changed how homeowners think about their roofs.',
    '',
    'The efficiency of commercial solar panels reached 24 percent in 2024.',
  ].join('\n');

  it('the sentences with the most query words, in page order, joined as Tavily joins chunks', () => {
    expect(relevantChunks(page, ['solar', 'efficiency'], 2)).toBe(
      'Solar panel efficiency [...] The efficiency of commercial solar panels reached 24 percent in 2024.',
    );
    expect(relevantChunks(page, ['efficiency', 'percent'], 1)).toBe('The efficiency of commercial solar panels reached 24 percent in 2024.');
  });

  it('undefined when no sentence holds a query word', () => {
    expect(relevantChunks(page, ['quokka'], 3)).toBeUndefined();
    expect(relevantChunks('', ['solar'], 3)).toBeUndefined();
  });
});
