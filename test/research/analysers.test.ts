/**
 * The research analysers (plugins/analysers: entities, sentiment, trends,
 * summary) over corpora built by hand from small realistic sources: exact
 * entity counts and co-occurrence, people / organisations / places found
 * by compromise, sentiment signs, rising / falling / stable trends from
 * dated sentences, the extractive summary (relevant, non-redundant, count
 * by depth, verbatim, deterministic), hostile inputs and a loose timing.
 * Every quote any analyser returns is checked to be verbatim in its source.
 */
import { describe, expect, it } from 'vitest';
import {
  isVerbatim, type AnalysisDepth, type AnalyserOutput, type Corpus, type Evidence, type ResearchInput, type ResearchSource, type Sentence,
} from '../../core/research.js';
import {
  analyseEntities, analyseSentiment, analyseTrends, builtinAnalysers, changeDirection, entitiesAnalyser, quantities, sentenceSentiment,
  sentimentAnalyser, summarise, summaryAnalyser, textDates, trendsAnalyser, type EntityAnalysis, type SentimentField, type Trend,
} from '../../plugins/analysers/index.js';
import { quotesOf } from '../../plugins/operations/research/report.js';
import { readSources } from '../../plugins/operations/research/read.js';

// ---------------------------------------------------------------------------
// A corpus by hand.

interface Src { readonly text: string; readonly publishedAt?: string; readonly domain?: string }

const STOP = new Set(['a', 'an', 'the', 'of', 'in', 'on', 'at', 'to', 'and', 'or', 'is', 'are', 'was', 'were', 'be', 'by', 'for', 'with', 'it', 'its', 'this', 'that', 'from', 'as', 'how', 'what', 'does', 'do', 'about']);
/** Lower-case words without stop words, a trailing plural s removed. */
const terms = (text: string): string[] =>
  (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOP.has(w)).map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w));

/** Sentences: runs ending at . ! ? followed by whitespace (so 1.8 stays whole), trimmed, with a letter. */
function split(id: string, text: string): Sentence[] {
  const out: Sentence[] = [];
  const re = /[^\s][\s\S]*?(?:[.!?。](?=\s|$)|$)/gu;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m[0] === '') { re.lastIndex++; continue; }
    const start = m.index;
    let end = start + m[0].length;
    while (end > start && /\s/.test(text[end - 1]!)) end--;
    const s = text.slice(start, end);
    if (/\p{L}/u.test(s)) out.push({ sourceId: id, start, end, text: s, index: out.length });
  }
  return out;
}

function corpusOf(srcs: readonly Src[], input: Partial<ResearchInput> & { research_query: string }, extra: { keyphrases?: string[]; depth?: AnalysisDepth } = {}): Corpus {
  const sources: ResearchSource[] = srcs.map((s, i) => ({
    id: `src_${i + 1}`,
    url: `https://${s.domain ?? `site${i + 1}.example`}/a/${i + 1}`,
    domain: s.domain ?? `site${i + 1}.example`,
    type: 'news',
    typeReason: 'test',
    meta: {
      title: `Source ${i + 1}`, authors: [], publishedAt: s.publishedAt === undefined ? null : Date.parse(s.publishedAt),
      container: null, publisher: null, doi: null, cslType: 'article-newspaper',
    },
    language: 'en',
    country: null,
    text: s.text,
    origin: 'index',
    textKind: 'index',
    providers: ['local'],
    searchRank: i + 1,
    fetchedAt: Date.parse('2024-06-01T00:00:00Z'),
    quality: 0.7,
  }));
  const sentences = new Map(sources.map((s) => [s.id, split(s.id, s.text)]));
  const q = new Set(terms(input.research_query));
  const raw = new Map<string, number>();
  let best = 0;
  for (const list of sentences.values()) for (const s of list) {
    const n = new Set(terms(s.text).filter((t) => q.has(t))).size;
    raw.set(`${s.sourceId}:${s.index}`, n);
    best = Math.max(best, n);
  }
  const sentenceRelevance = new Map([...raw].map(([k, v]) => [k, best === 0 ? 0 : v / best]));
  const depth = extra.depth ?? input.analysis_depth ?? 'standard';
  return {
    question: input.research_query,
    input: { ...input, analysis_depth: depth },
    plan: {
      depth, analysisType: 'general', subQueries: [input.research_query], keyphrases: extra.keyphrases ?? [], maxSources: 10,
      sourceTypes: undefined, window: undefined, regions: [], language: 'en', deadlineMs: 30_000,
    },
    sources,
    sentences,
    passages: [],
    sentenceRelevance,
    now: Date.parse('2024-06-01T00:00:00Z'),
    terms,
  };
}

const byId = (c: Corpus) => new Map(c.sources.map((s) => [s.id, s]));

/** Every quote in the fields is verbatim (the report's invariant). */
function expectVerbatim(c: Corpus, fields: unknown): Evidence[] {
  const quotes = quotesOf({ x: fields });
  const sources = byId(c);
  for (const q of quotes) expect(isVerbatim(q, sources), JSON.stringify(q).slice(0, 200)).toBe(true);
  return quotes;
}

/** Runs every built-in analyser that applies, in order, as the operation does. */
async function runAll(c: Corpus): Promise<Record<string, AnalyserOutput>> {
  const so: Record<string, AnalyserOutput> = {};
  for (const a of builtinAnalysers) {
    if (!a.applies(c.input)) continue;
    so[a.id] = await a.analyse(c, so);
  }
  return so;
}

// ---------------------------------------------------------------------------

const EV_SOURCES: Src[] = [
  { text: "Tesla sold 1.8 million cars in 2023, and Tesla's margins fell. BYD overtook Tesla in the fourth quarter of 2023. Analysts at Morgan Stanley praised BYD for its low costs." },
  { text: 'Volkswagen and Tesla announced a charging partnership in Germany. The Teslas on display impressed visitors at the show.' },
  { text: 'Tim Cook, the chief executive of Apple Inc., spoke in Paris on Tuesday. Angela Merkel met Emmanuel Macron in Berlin to discuss Siemens. Tim Cook said Apple Inc. would open a store in Paris.' },
  { text: 'Battery prices keep falling across the industry. Nobody here mentions the carmakers by name.' },
];

describe('entity_analysis', () => {
  const c = corpusOf(EV_SOURCES, { research_query: 'How are Tesla and BYD doing?', entities: ['Tesla', 'BYD', 'Nokia', 'tesla '] });
  const out = analyseEntities(c);
  const get = (name: string) => out.entities.find((e) => e.name === name)!;
  const requested = new Set(['Tesla', 'BYD', 'Nokia']);

  it('counts mentions with variants, lists sources, merges duplicate requests', () => {
    expect(out.entities.map((e) => e.name)).toEqual(['Tesla', 'BYD', 'Nokia']);
    // src_1: Tesla, Tesla's, Tesla; src_2: Tesla, Teslas.
    expect(get('Tesla').mentions).toBe(5);
    expect(get('Tesla').sources).toEqual(['src_1', 'src_2']);
    expect(get('BYD').mentions).toBe(2);
    expect(get('BYD').sources).toEqual(['src_1']);
  });

  it('counts co-occurrence per sentence', () => {
    const co = (name: string) => get(name).co_occurring.filter((x) => requested.has(x.name));
    expect(co('Tesla')).toEqual([{ name: 'BYD', count: 1 }]);
    expect(co('BYD')).toEqual([{ name: 'Tesla', count: 1 }]);
    // Discovered entities co-occur too: Morgan Stanley with BYD, Volkswagen with Tesla.
    const all = (name: string) => get(name).co_occurring.map((x) => x.name);
    expect(all('BYD')).toContain('Morgan Stanley');
    expect(all('Tesla')).toContain('Volkswagen');
  });

  it('lists a requested entity no source names, with 0 mentions', () => {
    expect(get('Nokia')).toEqual({ name: 'Nokia', mentions: 0, sources: [], co_occurring: [], sentiment: { score: 0, label: 'neutral' }, statements: [] });
  });

  it('quotes its most relevant statements verbatim, at most 5', () => {
    const st = get('Tesla').statements;
    expect(st.length).toBeGreaterThan(0);
    expect(st.length).toBeLessThanOrEqual(5);
    for (const e of st) expect(e.text.toLowerCase()).toContain('tesla');
    // The first names both Tesla and BYD (the question's terms).
    expect(st[0]!.text).toBe('BYD overtook Tesla in the fourth quarter of 2023.');
    expectVerbatim(c, out);
    expect(['positive', 'negative', 'neutral']).toContain(get('Tesla').sentiment.label);
  });

  it('finds other people, organisations and places with compromise', () => {
    const o = out.other_entities;
    const names = (l: readonly { name: string }[]) => l.map((x) => x.name);
    expect(names(o.people)).toEqual(expect.arrayContaining(['Tim Cook', 'Angela Merkel', 'Emmanuel Macron']));
    expect(names(o.organizations)).toEqual(expect.arrayContaining(['Apple', 'Volkswagen']));
    expect(names(o.places)).toEqual(expect.arrayContaining(['Paris', 'Berlin']));
    const cook = o.people.find((p) => p.name === 'Tim Cook')!;
    expect(cook).toEqual({ name: 'Tim Cook', mentions: 2, sources: ['src_3'] });
    expect(o.places.find((p) => p.name === 'Paris')!.mentions).toBe(2);
    expect(o.organizations.find((p) => p.name === 'Apple')!.mentions).toBe(2);
    // Requested entities are not "other"; no junk.
    for (const l of [o.people, o.organizations, o.places]) {
      expect(l.length).toBeLessThanOrEqual(20);
      for (const e of l) {
        expect(requested.has(e.name)).toBe(false);
        expect(e.name.length).toBeGreaterThan(1);
        expect(e.name).not.toBe(e.name.toLowerCase());
        expect(e.mentions).toBeGreaterThan(0);
      }
    }
  });

  it('applies only with entities, and is deterministic', () => {
    expect(entitiesAnalyser.applies({ research_query: 'x' })).toBe(false);
    expect(entitiesAnalyser.applies({ research_query: 'x', entities: [' '] })).toBe(false);
    expect(entitiesAnalyser.applies({ research_query: 'x', entities: ['Tesla'] })).toBe(true);
    expect(analyseEntities(c)).toEqual(out);
  });

  it('matches names with regex metacharacters literally, caps at 50 entities', () => {
    const text = 'We rewrote the parser in C++ (lang) last year; C++ (lang) is fast. The pattern .* matched nothing. Node (v20) [beta] was slower.';
    const many = [...Array.from({ length: 60 }, (_, i) => `Entity${i}`), 'C++ (lang)', '.*', '(?<x>', '[a-z]+', '\\', 'Node (v20) [beta]', '$^|?'];
    const hc = corpusOf([{ text }], { research_query: 'parser speed', entities: ['C++ (lang)', '.*', '(?<x>', '[a-z]+', '\\', 'Node (v20) [beta]', '$^|?'] });
    const r = analyseEntities(hc);
    const m = (n: string) => r.entities.find((e) => e.name === n)!.mentions;
    expect(m('C++ (lang)')).toBe(2);
    expect(m('.*')).toBe(1);
    expect(m('Node (v20) [beta]')).toBe(1);
    expect(m('(?<x>')).toBe(0);
    expect(m('[a-z]+')).toBe(0);
    expect(m('\\')).toBe(0);
    expect(m('$^|?')).toBe(0);
    const fifty = analyseEntities(corpusOf([{ text }], { research_query: 'parser', entities: many }));
    expect(fifty.entities).toHaveLength(50);
    expect(fifty.entities[0]!.name).toBe('Entity0');
  });
});

// ---------------------------------------------------------------------------

describe('sentiment', () => {
  const c = corpusOf([
    { text: 'Customers love the new phone. The battery life of the phone is excellent and the camera is wonderful. Reviewers called the new phone a great success.' },
    { text: 'Customers hate the new phone. The battery life of the phone is terrible and the screen breaks easily. Reviewers called the new phone an awful failure.' },
    { text: 'The new phone was released on Tuesday. The phone comes in three sizes. The new phone weighs 180 grams.' },
  ], { research_query: 'What do customers think of the new phone?', include_sentiment: true });
  const s = analyseSentiment(c);

  it('scores each source with the right sign and label', () => {
    const [pos, neg, neu] = s.by_source;
    expect(pos).toMatchObject({ source_id: 'src_1', label: 'positive', sentences: 3 });
    expect(pos!.score).toBeGreaterThan(0.1);
    expect(neg).toMatchObject({ source_id: 'src_2', label: 'negative', sentences: 3 });
    expect(neg!.score).toBeLessThan(-0.1);
    expect(neu).toMatchObject({ source_id: 'src_3', label: 'neutral' });
    expect(Math.abs(neu!.score)).toBeLessThan(0.1);
    expect(s.overall.sentences).toBe(s.by_source.reduce((a, x) => a + x.sentences, 0));
    expect(s.overall.score).toBeGreaterThanOrEqual(-1);
    expect(s.overall.score).toBeLessThanOrEqual(1);
    expect(s.method).toMatch(/^wink-nlp \d+\.\d+\.\d+ with wink-eng-lite-web-model \d+\.\d+\.\d+/);
  });

  it('overall follows the sources: all positive is positive', () => {
    const p = analyseSentiment(corpusOf([{ text: 'The phone is excellent.' }, { text: 'I love this wonderful phone.' }], { research_query: 'phone' }));
    expect(p.overall.label).toBe('positive');
    expect(sentenceSentiment('This is a terrible, awful disaster.')).toBeLessThan(0);
    expect(sentenceSentiment('')).toBe(0);
    expect(sentenceSentiment('🚀🚀🚀 1234')).toBe(0);
  });

  it('applies only with include_sentiment', () => {
    expect(sentimentAnalyser.applies({ research_query: 'x' })).toBe(false);
    expect(sentimentAnalyser.applies({ research_query: 'x', include_sentiment: true })).toBe(true);
  });
});

// ---------------------------------------------------------------------------

describe('trend_analysis', () => {
  const TREND_SOURCES: Src[] = [
    { publishedAt: '2020-06-01', text: 'Electric vehicle sales rose to 5% of the market in 2019. Diesel car sales fell to 30% of the market in 2019.' },
    { publishedAt: '2024-02-01', text: 'Electric vehicle sales reached 18% of the market in 2023, up from 5% in 2019. Diesel car sales declined to 12% in 2023.' },
    { publishedAt: '2022-01-10', text: 'In 2021 electric vehicle sales grew to 9% of the market. Diesel car sales dropped to 20% in 2021.' },
    { publishedAt: '2024-03-15', text: 'Electric vehicle sales kept climbing this spring, dealers said.' },
    { publishedAt: '2023-01-01', text: 'Hydrogen car sales rose in 2021 after new subsidies. Hydrogen car sales fell in 2022 when the subsidies ended.' },
  ];
  const c = corpusOf(TREND_SOURCES, { research_query: 'How are electric vehicle sales changing?', include_trends: true, focus_areas: ['diesel car sales', 'hydrogen car sales'] }, { keyphrases: ['electric vehicle sales'] });
  const trends = analyseTrends(c);
  const get = (topic: string) => trends.find((t) => t.topic === topic);

  it('finds a rising trend with a series across sources', () => {
    const ev = get('electric vehicle sales')!;
    expect(ev.direction).toBe('rising');
    expect(ev.series).toEqual([{ date: '2019-01-01', value: 5 }, { date: '2021-01-01', value: 9 }, { date: '2023-01-01', value: 18 }]);
    expect(ev.unit).toBe('%');
    expect(ev.timeframe).toEqual({ start: '2019-01-01', end: '2024-03-15' });
    expect(ev.evidence.map((e) => [e.source_id, e.date, e.date_source])).toEqual([
      ['src_1', '2019-01-01', 'text'], ['src_3', '2021-01-01', 'text'], ['src_2', '2023-01-01', 'text'], ['src_4', '2024-03-15', 'published'],
    ]);
    expect(ev.confidence).toBeGreaterThan(0.5);
    expect(ev.confidence).toBeLessThanOrEqual(1);
  });

  it('finds a falling trend', () => {
    const d = get('diesel car sales')!;
    expect(d.direction).toBe('falling');
    expect(d.series.map((p) => p.value)).toEqual([30, 20, 12]);
    expect(d.timeframe).toEqual({ start: '2019-01-01', end: '2023-01-01' });
  });

  it('is stable when the evidence is mixed', () => {
    const h = get('hydrogen car sales')!;
    expect(h.direction).toBe('stable');
    expect(h.series).toEqual([]);
    expect(h.unit).toBeNull();
    expect(h.evidence.map((e) => e.date)).toEqual(['2021-01-01', '2022-01-01']);
  });

  it('keeps every quote verbatim, at most 10 trends, deterministic', () => {
    expectVerbatim(c, trends);
    expect(trends.length).toBeLessThanOrEqual(10);
    for (const t of trends) {
      expect(t.evidence.length).toBeGreaterThanOrEqual(2);
      expect(t.timeframe.start <= t.timeframe.end).toBe(true);
      for (const e of t.evidence) expect(e.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
    expect(analyseTrends(c)).toEqual(trends);
  });

  it('finds none when nothing is dated, or with a single dated sentence', () => {
    const undated = corpusOf([
      { text: 'Electric vehicle sales rose sharply. Electric vehicle sales increased again.' },
      { text: 'Electric vehicle sales grew to 9% of the market.' },
    ], { research_query: 'electric vehicle sales', include_trends: true }, { keyphrases: ['electric vehicle sales'] });
    expect(analyseTrends(undated)).toEqual([]);
    const one = corpusOf([{ text: 'Electric vehicle sales rose in 2021. Nothing else here is dated at all.' }], { research_query: 'electric vehicle sales' }, { keyphrases: ['electric vehicle sales'] });
    expect(analyseTrends(one)).toEqual([]);
  });

  it('reads change words with negation, dates with a year, numbers with units', () => {
    expect(changeDirection('Sales rose sharply.')).toBe(1);
    expect(changeDirection('Sales did not rise.')).toBe(0);
    expect(changeDirection("Sales didn't fall; they increased.")).toBe(1);
    expect(changeDirection('Output declined and prices fell.')).toBe(-1);
    const now = Date.parse('2024-06-01');
    expect(textDates('Last year revenue grew in March.', now, now)).toEqual([]);
    expect(textDates('On 5 May 2020 it started, and by 2022 it ended.', now, now).map((d) => d.day)).toEqual(['2020-05-05', '2022-01-01']);
    expect(textDates('Between 2019 and 2023 usage doubled.', now, now).map((d) => d.day)).toEqual(['2019-01-01', '2023-01-01']);
    expect(textDates('The 2000 delegates met.', now, now)).toEqual([]);
    const q = quantities('Revenue hit $1.2 billion, 30% more, from 2,500 stores and 1.5 million vehicles.', []);
    expect(q.map((x) => [x.value, x.unit])).toEqual([[1.2e9, 'USD'], [30, '%'], [2500, 'store'], [1.5e6, 'vehicle']]);
  });

  it('applies only with include_trends', () => {
    expect(trendsAnalyser.applies({ research_query: 'x' })).toBe(false);
    expect(trendsAnalyser.applies({ research_query: 'x', include_trends: true })).toBe(true);
  });
});

// ---------------------------------------------------------------------------

const HEART: Src[] = [
  { text: 'Regular exercise lowers blood pressure and strengthens the heart muscle over time. Subscribe to our newsletter for more heart health tips. The weather in the city was mild all week. Walking for thirty minutes a day reduces the risk of heart disease by about a third.' },
  { text: 'Regular exercise lowers blood pressure and strengthens the heart muscle over time. Aerobic exercise improves heart health by raising good cholesterol levels in adults. Short.' },
  { text: 'Doctors recommend regular exercise because it keeps the heart and blood vessels healthy. COPYRIGHT 2024 HEART HEALTH MEDIA ALL RIGHTS RESERVED. People who exercise regularly have a lower resting heart rate than sedentary people.' },
  { text: 'Strength training twice a week also supports heart health, according to a large cohort study. The museum opened a new wing dedicated to modern sculpture. Too much intense exercise without rest can strain the heart in rare cases.' },
  { text: 'Exercise helps people manage their weight, which reduces strain on the heart. Swimming is a low impact exercise that benefits heart health at any age. Stretching before exercise may help prevent injuries to muscles.' },
];

describe('executive_summary', () => {
  const q = 'How does regular exercise affect heart health?';
  const c = corpusOf(HEART, { research_query: q }, { depth: 'standard' });
  const s = summarise(c);
  const qt = new Set(terms(q));

  it('picks sentences about the question, verbatim, each with its marker', () => {
    expect(s.summary_evidence).toHaveLength(5);
    const sources = byId(c);
    for (const e of s.summary_evidence) {
      expect(isVerbatim(e, sources)).toBe(true);
      expect(terms(e.text).some((t) => qt.has(t))).toBe(true);
      expect(e.text).not.toMatch(/subscribe|copyright|museum|weather/i);
      expect(e.text.length).toBeGreaterThanOrEqual(40);
      expect(s.executive_summary).toContain(`${e.text} [${e.source_id.slice(4)}]`);
    }
    expect(s.executive_summary).toBe(s.summary_evidence.map((e) => `${e.text} [${e.source_id.slice(4)}]`).join(' '));
  });

  it('skips near duplicates', () => {
    const texts = s.summary_evidence.map((e) => e.text);
    expect(texts.filter((t) => t.startsWith('Regular exercise lowers blood pressure'))).toHaveLength(1);
    const sets = texts.map((t) => new Set(terms(t)));
    for (let i = 0; i < sets.length; i++) for (let j = i + 1; j < sets.length; j++) {
      const a = sets[i]!;
      const b = sets[j]!;
      const inter = [...a].filter((t) => b.has(t)).length;
      expect(inter / (a.size + b.size - inter)).toBeLessThanOrEqual(0.6);
    }
  });

  it('picks 3 / 5 / 8 sentences by depth, deterministically', () => {
    expect(summarise(corpusOf(HEART, { research_query: q }, { depth: 'quick' })).summary_evidence).toHaveLength(3);
    const comp = summarise(corpusOf(HEART, { research_query: q }, { depth: 'comprehensive' }));
    expect(comp.summary_evidence).toHaveLength(8);
    expect(new Set(comp.summary_evidence.map((e) => e.text)).size).toBe(8);
    expect(summarise(c)).toEqual(s);
    expect(summarise(corpusOf(HEART, { research_query: q }))).toEqual(s);
  });

  it('is always listed: empty with generate_summary false', async () => {
    expect(summaryAnalyser.applies({ research_query: q })).toBe(true);
    const off = await summaryAnalyser.analyse(corpusOf(HEART, { research_query: q, generate_summary: false }), {});
    expect(off.fields).toEqual({ executive_summary: '' });
    const on = await summaryAnalyser.analyse(c, {});
    expect(on.fields.executive_summary).toBe(s.executive_summary);
    expect(on.fields.summary_evidence).toEqual(s.summary_evidence);
  });
});

// ---------------------------------------------------------------------------

const ALL_ON = { include_sentiment: true, include_trends: true, generate_recommendations: true } as const;

describe('hostile corpora', () => {
  it('no sources, or only whitespace', async () => {
    for (const srcs of [[], [{ text: '' }, { text: '   \n\t  \u00a0 ' }]] as Src[][]) {
      const c = corpusOf(srcs, { research_query: 'anything at all', entities: ['Tesla'], ...ALL_ON });
      const so = await runAll(c);
      const ea = so.entity_analysis!.fields.entity_analysis as EntityAnalysis;
      expect(ea.entities).toEqual([{ name: 'Tesla', mentions: 0, sources: [], co_occurring: [], sentiment: { score: 0, label: 'neutral' }, statements: [] }]);
      expect(ea.other_entities).toEqual({ people: [], organizations: [], places: [] });
      expect(so.sentiment!.fields.sentiment).toMatchObject({ overall: { score: 0, label: 'neutral', sentences: 0 }, by_source: [] });
      expect(so.trend_analysis!.fields.trend_analysis).toEqual([]);
      expect(so.executive_summary!.fields).toEqual({ executive_summary: '', summary_evidence: [] });
    }
  });

  it('unicode, emoji, RTL and CJK text', async () => {
    const c = corpusOf([
      { publishedAt: '2023-05-01', text: 'مبيعات السيارات الكهربائية ارتفعت في عام 2023. هذه جملة عربية طويلة عن السيارات الكهربائية والبطاريات.' },
      { publishedAt: '2024-05-01', text: 'Die Zukunft 🚀 ist elektrisch: Über 40% der Käufer in München wählen ein E‑Auto. 電気自動車の販売は2023年に増加した。' },
      { text: '\u202eReversed text\u202c with zero\u200bwidth joiners 👩‍👩‍👧 and combining e\u0301 marks about electric cars in Zürich.' },
      { text: '🚀🚀🚀 🔋🔋 ✨✨✨ 🚗' },
    ], { research_query: 'electric cars München Zürich السيارات', entities: ['München', 'Zürich', '👩‍👩‍👧', 'E‑Auto'], ...ALL_ON }, { keyphrases: ['electric cars'] });
    const so = await runAll(c);
    for (const out of Object.values(so)) expectVerbatim(c, out.fields);
    const ea = so.entity_analysis!.fields.entity_analysis as EntityAnalysis;
    expect(ea.entities.find((e) => e.name === 'München')!.mentions).toBe(1);
    expect(ea.entities.find((e) => e.name === 'Zürich')!.mentions).toBe(1);
    expect(ea.entities.find((e) => e.name === 'E‑Auto')!.mentions).toBe(1);
    expect(ea.entities.find((e) => e.name === '👩‍👩‍👧')!.mentions).toBe(1);
  });

  it('a 200,000-character source', async () => {
    const para = 'Grid batteries grew quickly in 2022 and storage prices fell by 20% in 2023, Tesla said in Austin. Analysts at Lazard were pleased with the outcome. ';
    let text = '';
    for (let i = 0; text.length < 200_000; i++) text += para.replace('2022', String(2000 + (i % 24))) + `Item ${i} of the long report discusses storage number ${i}. `;
    const c = corpusOf([{ text: text.slice(0, 200_000), publishedAt: '2024-01-01' }, { text: para }], { research_query: 'grid battery storage prices', entities: ['Tesla', 'Lazard'], ...ALL_ON }, { keyphrases: ['storage prices'] });
    const t0 = performance.now();
    const so = await runAll(c);
    const ms = performance.now() - t0;
    for (const out of Object.values(so)) expectVerbatim(c, out.fields);
    expect((so.entity_analysis!.fields.entity_analysis as EntityAnalysis).entities[0]!.mentions).toBeGreaterThan(500);
    expect(ms).toBeLessThan(10_000);
  });
});

// ---------------------------------------------------------------------------

describe('through the read stage', () => {
  it('works on the corpus readSources builds (its sentence splitting and relevance)', async () => {
    const base = corpusOf([...EV_SOURCES, ...HEART].map((s, i) => ({ ...s, publishedAt: `202${i % 5}-03-01` })), { research_query: 'How are Tesla and BYD doing?', entities: ['Tesla', 'BYD'], ...ALL_ON }, { keyphrases: ['tesla', 'byd'] });
    const c = readSources({ input: base.input, plan: base.plan, sources: base.sources, tokenizer: { terms: (t) => terms(t) }, now: base.now });
    const so = await runAll(c);
    for (const out of Object.values(so)) expectVerbatim(c, out.fields);
    const ea = so.entity_analysis!.fields.entity_analysis as EntityAnalysis;
    expect(ea.entities.find((e) => e.name === 'Tesla')!.mentions).toBe(5);
    expect((so.executive_summary!.fields.summary_evidence as Evidence[]).length).toBeGreaterThan(0);
    expect(so.executive_summary!.fields.summary_evidence).toEqual((await runAll(c)).executive_summary!.fields.summary_evidence);
  });
});

// ---------------------------------------------------------------------------

describe('all analysers together', () => {
  it('run in order, every quote verbatim, 20 sources x 20k characters well within the budget', async () => {
    const topics = ['battery storage', 'solar capacity', 'wind turbines', 'grid prices', 'hydrogen projects'];
    const people = ['Maria Lopez', 'John Carter', 'Aiko Tanaka', 'Peter Novak'];
    const orgs = ['Siemens', 'Tesla', 'Iberdrola', 'Fluence', 'Orsted'];
    const places = ['Berlin', 'Madrid', 'Texas', 'Denmark', 'Tokyo'];
    const verbs = ['rose', 'fell', 'grew', 'declined', 'stayed flat'];
    const srcs: Src[] = [];
    for (let s = 0; s < 20; s++) {
      let text = '';
      for (let i = 0; text.length < 20_000; i++) {
        const k = s * 7 + i;
        const topic = topics[k % topics.length]!;
        text += `${topic[0]!.toUpperCase()}${topic.slice(1)} in ${places[k % places.length]!} ${verbs[k % verbs.length]!} to ${(k % 40) + 5}% in ${2015 + (k % 9)}, said ${people[k % people.length]!} of ${orgs[k % orgs.length]!}. `;
        text += `The ${['excellent', 'poor', 'steady', 'strong', 'weak'][k % 5]!} results for ${topic} surprised analysts at ${orgs[(k + 2) % orgs.length]!} in report ${k}. `;
        if (i % 7 === 0) text += 'Subscribe to our newsletter for updates. ';
      }
      srcs.push({ text: text.slice(0, 20_000), publishedAt: `20${15 + (s % 9)}-0${1 + (s % 9)}-15` });
    }
    const c = corpusOf(srcs, {
      research_query: 'How fast is battery storage growing compared with solar capacity?', entities: ['Tesla', 'Siemens', 'Fluence', 'Nobody Inc'],
      focus_areas: ['grid prices'], ...ALL_ON,
    }, { keyphrases: ['battery storage', 'solar capacity'], depth: 'comprehensive' });
    expect([...c.sentences.values()].reduce((n, l) => n + l.length, 0)).toBeGreaterThan(3000);
    // Warm the libraries (loaded once per process), then time a run.
    await runAll(corpusOf(EV_SOURCES, { research_query: 'Tesla', entities: ['Tesla'], ...ALL_ON }));
    const t0 = performance.now();
    const u0 = process.cpuUsage();
    const so = await runAll(c);
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(u0);
    console.log(`analysers over 20 sources x 20k characters: ${ms.toFixed(0)} ms wall, ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms CPU (${Object.keys(so).join(', ')})`);
    expect(ms).toBeLessThan(5000);
    expect(Object.keys(so)).toEqual(['key_insights', 'entity_analysis', 'sentiment', 'trend_analysis', 'executive_summary', 'recommendations']);
    for (const out of Object.values(so)) expectVerbatim(c, out.fields);
    const ea = so.entity_analysis!.fields.entity_analysis as EntityAnalysis;
    expect(ea.entities.find((e) => e.name === 'Tesla')!.sources).toHaveLength(20);
    expect(ea.entities.find((e) => e.name === 'Nobody Inc')!.mentions).toBe(0);
    expect((so.sentiment!.fields.sentiment as SentimentField).by_source).toHaveLength(20);
    const trends = so.trend_analysis!.fields.trend_analysis as Trend[];
    expect(trends.length).toBeGreaterThan(0);
    expect(trends.length).toBeLessThanOrEqual(10);
    expect((so.executive_summary!.fields.summary_evidence as Evidence[]).length).toBe(8);
    // Deterministic: the same corpus gives the same report.
    const again = await runAll(c);
    expect(Object.fromEntries(Object.entries(again).map(([k, v]) => [k, v.fields]))).toEqual(Object.fromEntries(Object.entries(so).map(([k, v]) => [k, v.fields])));
  });
});
