// The classic IR test collections used as DEVELOPMENT sets (Cranfield, CISI,
// NPL): documents, queries and relevance judgments read from the original
// SMART/Glasgow files that scripts/get-ir-collections.sh brings into
// ${SCOUR_IR_DATA:-benchmarks/.data/ir}/<name>/. Text is kept as the files
// hold it (hard-wrapped lines), since that is what research must read.
// CACM is held out on purpose and has no loader here.
//
//   import { loadCollection, availableCollections } from '../ir/collections.mjs';
//   const c = loadCollection('cisi'); // { name, shape, docs, queries, qrels }
//
// docs: [{ id, title, text, author }]; queries: [{ id, text }] (only judged
// ones); qrels: Map<queryId, Set<docId>> (every judged pair counts as
// relevant, binary, as ir_datasets and BEIR treat these sets).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const COLLECTIONS = ['cranfield', 'cisi', 'npl'];

/** What each set looks like, for the tables. */
export const SHAPES = {
  cranfield: 'aerodynamics abstracts, hard-wrapped; one-sentence questions',
  cisi: 'library-science abstracts, hard-wrapped; paragraph-long questions',
  npl: 'electronics abstracts, lower case without punctuation; short title queries',
};

export function irDataDir() {
  return process.env.SCOUR_IR_DATA ?? join(root, 'benchmarks', '.data', 'ir');
}

const FILES = { cranfield: 'cran.all.1400', cisi: 'CISI.ALL', npl: 'doc-text' };

export function availableCollections() {
  return COLLECTIONS.filter((n) => existsSync(join(irDataDir(), n, FILES[n])));
}

function read(name, file) {
  const path = join(irDataDir(), name, file);
  if (!existsSync(path)) throw new Error(`${name}: ${path} is missing (run: bash scripts/get-ir-collections.sh)`);
  return readFileSync(path, 'utf8').replace(/\r\n?/g, '\n');
}

/** SMART records: ".I id" then ".X" fields, each field's text as written. */
function smartRecords(text) {
  const records = [];
  let current = null;
  let field = null;
  for (const line of text.split('\n')) {
    const m = /^\.([A-Z])(?: +(\S+))?\s*$/.exec(line);
    if (m !== null && m[1] === 'I') {
      current = { id: String(Number(m[2])), fields: {} };
      records.push(current);
      field = null;
    } else if (m !== null && m[2] === undefined && current !== null) {
      field = m[1];
      current.fields[field] = current.fields[field] ?? [];
    } else if (current !== null && field !== null) {
      current.fields[field].push(line);
    }
  }
  const get = (r, f) => (r.fields[f] ?? []).join('\n').trim();
  return records.map((r) => ({ id: r.id, get: (f) => get(r, f) }));
}

/** NPL: "id\n text lines \n   /" records. */
function slashRecords(text) {
  const out = [];
  for (const chunk of text.split(/^\s*\/\s*$/m)) {
    const lines = chunk.split('\n').filter((l, i, all) => l.trim() !== '' || (i > 0 && i < all.length - 1));
    const first = lines.findIndex((l) => l.trim() !== '');
    if (first === -1) continue;
    const id = lines[first].trim();
    if (!/^\d+$/.test(id)) continue;
    out.push({ id, lines: lines.slice(first + 1) });
  }
  return out;
}

function judged(queries, qrels) {
  return queries.filter((q) => qrels.has(q.id) && qrels.get(q.id).size > 0 && q.text.trim() !== '');
}

function addRel(qrels, q, d) {
  if (!qrels.has(q)) qrels.set(q, new Set());
  qrels.get(q).add(d);
}

const loaders = {
  cranfield() {
    const docs = smartRecords(read('cranfield', 'cran.all.1400')).map((r) => ({ id: r.id, title: r.get('T'), text: r.get('W'), author: r.get('A') || null }));
    // cranqrel numbers queries 1..225 in file order, not by their .I labels.
    const queries = smartRecords(read('cranfield', 'cran.qry')).map((r, i) => ({ id: String(i + 1), text: r.get('W') }));
    const qrels = new Map();
    for (const line of read('cranfield', 'cranqrel').split('\n')) {
      const [q, d] = line.trim().split(/\s+/);
      if (q && d) addRel(qrels, q, String(Number(d)));
    }
    return { docs, queries: judged(queries, qrels), qrels };
  },
  cisi() {
    const docs = smartRecords(read('cisi', 'CISI.ALL')).map((r) => ({ id: r.id, title: r.get('T'), text: r.get('W'), author: r.get('A') || null }));
    const queries = smartRecords(read('cisi', 'CISI.QRY')).map((r) => ({ id: r.id, text: [r.get('T'), r.get('W')].filter(Boolean).join('\n') }));
    const qrels = new Map();
    for (const line of read('cisi', 'CISI.REL').split('\n')) {
      const [q, d] = line.trim().split(/\s+/);
      if (q && d) addRel(qrels, String(Number(q)), String(Number(d)));
    }
    return { docs, queries: judged(queries, qrels), qrels };
  },
  npl() {
    const docs = slashRecords(read('npl', 'doc-text')).map((r) => ({ id: r.id, title: '', text: r.lines.join('\n').trim(), author: null }));
    const queries = slashRecords(read('npl', 'query-text')).map((r) => ({ id: r.id, text: r.lines.join('\n').trim() }));
    const qrels = new Map();
    for (const r of slashRecords(read('npl', 'rlv-ass'))) for (const d of r.lines.join(' ').trim().split(/\s+/)) if (d) addRel(qrels, r.id, d);
    return { docs, queries: judged(queries, qrels), qrels };
  },
};

/** { name, shape, docs, queries, qrels } of one development collection. */
export function loadCollection(name) {
  const load = loaders[name];
  if (load === undefined) throw new Error(`unknown collection ${name} (have ${COLLECTIONS.join(', ')})`);
  return { name, shape: SHAPES[name], ...load() };
}

/** The document URL of a collection's doc id (the index is keyed by URL), and back. */
export const urlIn = (name) => (id) => `https://${name}.example.org/doc/${id}`;
export const idFromUrl = (url) => url.slice(url.lastIndexOf('/') + 1);

/** A collection's docs as IndexDocuments, language left to detection as in an import. */
export function indexDocuments(c) {
  const url = urlIn(c.name);
  return c.docs.map((d) => ({
    url: url(d.id), title: d.title, text: d.text, publishedAt: null, language: null, country: null,
    type: 'academic', author: d.author, siteName: c.name, doi: null, safe: true,
  }));
}
