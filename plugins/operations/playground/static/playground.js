// The Scour playground. Plain modern JavaScript, no framework, no build step.
// Every piece of data (answers, scraped content, error messages) reaches the
// page as text (textContent, text nodes, element properties), never as HTML.
// The API key lives in sessionStorage only (this tab): never localStorage,
// never a cookie, and it is left out of the copied snippets.

const KEY_STORAGE = 'scour.playground.key';
/** Operations listed first, by OpenAPI tag; other tags follow in document order. */
const TAG_ORDER = ['search', 'scrape', 'crawl', 'map', 'research', 'account', 'tools'];
/** Tags and security schemes the playground leaves out: its own routes, service routes, the admin API. */
const HIDDEN_TAGS = new Set(['system', 'playground']);
/** Client method names of scour/client, by route. */
const CLIENT_METHODS = {
  'POST /v1/search': 'search',
  'POST /v1/scrape': 'scrape',
  'POST /v1/scrape/bulk': 'bulkScrape',
  'POST /v1/research': 'research',
  'POST /v1/crawl': 'crawl',
  'POST /v1/map': 'map',
  'GET /v1/usage': 'usage',
};
const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-window', 'retry-after'];
const LONG_STRING = 160;
const MAX_CHILDREN = 500;

const $ = (id) => document.getElementById(id);

/** An element: `props` are set as properties (className, type, value...), except `data-*` and `aria-*` as attributes; strings among `children` become text nodes. */
function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null) continue;
    if (k.startsWith('data-') || k.startsWith('aria-') || k === 'for') e.setAttribute(k, String(v));
    else e[k] = v;
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(typeof c === 'string' || typeof c === 'number' ? String(c) : c);
  }
  return e;
}

/** Only http(s) links are made clickable: a javascript: or data: URL from a scraped page stays text. */
function safeHref(value) {
  if (typeof value !== 'string') return undefined;
  try {
    const u = new URL(value, location.href);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// Operations from /v1/openapi.json

const state = { ops: [], current: undefined, fields: [] };

function jsonContent(op, status) {
  return op.responses?.[status]?.content?.['application/json'];
}

function listOperations(doc) {
  const ops = [];
  for (const [path, methods] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(methods)) {
      const tag = op.tags?.[0] ?? 'other';
      if (HIDDEN_TAGS.has(tag)) continue;
      if ((op.security ?? []).some((s) => 'adminToken' in s)) continue;
      // Files (screenshots, exports) are not JSON: they are shown where an answer links them.
      const ok = Object.keys(op.responses ?? {}).find((s) => /^2/.test(s));
      if (ok === undefined || jsonContent(op, ok) === undefined) continue;
      ops.push({
        id: op.operationId,
        method: method.toUpperCase(),
        path,
        tag,
        summary: op.summary ?? '',
        description: op.description ?? '',
        bearer: (op.security ?? []).some((s) => 'bearerAuth' in s),
        params: (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
        schema: op.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  const rank = (t) => (TAG_ORDER.includes(t) ? TAG_ORDER.indexOf(t) : TAG_ORDER.length);
  return ops.sort((a, b) => rank(a.tag) - rank(b.tag));
}

function fillOperationSelect(ops) {
  const select = $('operation');
  select.replaceChildren();
  const groups = new Map();
  for (const op of ops) {
    let g = groups.get(op.tag);
    if (!g) {
      g = el('optgroup', { label: op.tag });
      groups.set(op.tag, g);
      select.append(g);
    }
    g.append(el('option', { value: op.id }, `${op.method} ${op.path}`));
  }
  select.disabled = false;
}

// ---------------------------------------------------------------------------
// The form, from the request schema

function enumValues(s) {
  if (Array.isArray(s?.enum)) return s.enum;
  if (Array.isArray(s?.anyOf) && s.anyOf.length > 0 && s.anyOf.every((x) => 'const' in x)) return s.anyOf.map((x) => x.const);
  return undefined;
}

function typeOf(s) {
  if (s === undefined) return undefined;
  if (typeof s.type === 'string') return s.type;
  const values = enumValues(s);
  if (values) return typeof values[0] === 'number' ? (values.every(Number.isInteger) ? 'integer' : 'number') : typeof values[0];
  return undefined;
}

/** What input a property gets: select (enum, boolean), number, text, textarea, lines (array of strings or numbers) or json (anything else). */
function fieldKind(s) {
  const t = typeOf(s);
  if (t === 'boolean' || enumValues(s)) return 'select';
  if (t === 'integer' || t === 'number') return 'number';
  if (t === 'string') return (s.maxLength ?? 0) >= 10_000 ? 'textarea' : 'text';
  if (t === 'array') {
    const it = typeOf(s.items);
    if (it === 'string' || it === 'integer' || it === 'number') return 'lines';
  }
  return 'json';
}

function hintOf(s, kind) {
  const parts = [];
  if (s.description) parts.push(s.description);
  if (kind === 'lines') {
    const values = enumValues(s.items);
    parts.push(values ? `One per line, from: ${values.join(', ')}.` : 'One per line.');
  }
  if (kind === 'json') parts.push('JSON.');
  if (s.default !== undefined && kind !== 'select') parts.push(`Default: ${JSON.stringify(s.default)}.`);
  if (s.minimum !== undefined || s.maximum !== undefined) parts.push(`Range: ${s.minimum ?? '…'} to ${s.maximum ?? '…'}.`);
  return parts.join(' ');
}

function buildField(name, s, required, where) {
  const kind = fieldKind(s);
  const id = `f-${where}-${name}`;
  let input;
  if (kind === 'select') {
    const values = typeOf(s) === 'boolean' && !enumValues(s) ? [true, false] : enumValues(s);
    const unset = s.default !== undefined ? `(default: ${JSON.stringify(s.default)})` : required ? '(choose)' : '(not set)';
    input = el('select', { id }, el('option', { value: '' }, unset), values.map((v, i) => el('option', { value: String(i) }, String(v))));
    input.dataset.values = JSON.stringify(values);
  } else if (kind === 'number') {
    input = el('input', { id, type: 'number', step: typeOf(s) === 'integer' ? '1' : 'any', min: s.minimum, max: s.maximum, placeholder: s.default !== undefined ? String(s.default) : '' });
  } else if (kind === 'text') {
    input = el('input', { id, type: 'text', spellcheck: false, placeholder: s.default !== undefined ? String(s.default) : (s.format ?? '') });
  } else {
    input = el('textarea', { id, rows: kind === 'json' ? 3 : 4, spellcheck: false, placeholder: kind === 'json' ? (s.type === 'object' ? '{ }' : '') : '' });
  }
  const label = el('label', { for: id }, name, required && s.default === undefined ? el('span', { className: 'required', title: 'required' }, ' *') : '');
  const wrap = el('div', { className: `field kind-${kind}`, 'data-field': name }, label, input, el('small', { className: 'muted' }, hintOf(s, kind)));
  return { name, kind, schema: s, input, wrap, where };
}

/** The value of one field, `undefined` when left empty; throws an Error naming the field when it cannot be read. */
function readField(f) {
  const raw = f.input.value;
  if (f.kind === 'select') return raw === '' ? undefined : JSON.parse(f.input.dataset.values)[Number(raw)];
  if (raw.trim() === '') return undefined;
  if (f.kind === 'number') {
    const n = Number(raw);
    if (!Number.isFinite(n)) throw new Error(`${f.name}: not a number`);
    return n;
  }
  if (f.kind === 'text' || f.kind === 'textarea') return raw;
  if (f.kind === 'lines') {
    const lines = raw.split('\n').map((l) => l.trim()).filter((l) => l !== '');
    const it = typeOf(f.schema.items);
    if (it === 'string') return lines;
    return lines.map((l) => {
      const n = Number(l);
      if (!Number.isFinite(n)) throw new Error(`${f.name}: "${l}" is not a number`);
      return n;
    });
  }
  try {
    return JSON.parse(raw);
  } catch (e) {
    throw new Error(`${f.name}: not valid JSON (${e.message})`);
  }
}

function buildForm(op) {
  const box = $('form-fields');
  box.replaceChildren();
  const fields = [];
  if (op.params.length > 0) {
    const fs = el('fieldset', {}, el('legend', {}, 'Path'));
    for (const p of op.params) {
      const f = buildField(p, { type: 'string', description: `The {${p}} segment of ${op.path}.` }, true, 'path');
      fields.push(f);
      fs.append(f.wrap);
    }
    box.append(fs);
  }
  const s = op.schema;
  if (s !== undefined) {
    const fs = el('fieldset', {}, el('legend', {}, 'Body'));
    const required = new Set(s.required ?? []);
    const props = Object.entries(s.properties ?? {});
    // Required fields first, then the rest in schema order.
    props.sort(([a], [b]) => Number(required.has(b)) - Number(required.has(a)));
    for (const [name, ps] of props) {
      const f = buildField(name, ps, required.has(name), 'body');
      fields.push(f);
      fs.append(f.wrap);
    }
    if (props.length === 0) fs.append(el('p', { className: 'muted' }, 'No fields.'));
    box.append(fs);
  }
  if (fields.length === 0) box.append(el('p', { className: 'muted' }, 'Nothing to fill in.'));
  state.fields = fields;
  for (const f of fields) f.input.addEventListener('input', updateSnippets);
  for (const f of fields) f.input.addEventListener('change', updateSnippets);
}

/** The request the form describes: { path, body } (body undefined for routes without one). Throws on a field it cannot read. */
function currentRequest() {
  const op = state.current;
  let path = op.path;
  let body;
  if (op.schema !== undefined) body = {};
  for (const f of state.fields) {
    const v = readField(f);
    if (f.where === 'path') {
      if (v === undefined || v === '') throw new Error(`${f.name}: required (path)`);
      path = path.replace(`{${f.name}}`, encodeURIComponent(v));
    } else if (v !== undefined) {
      body[f.name] = v;
    }
  }
  return { method: op.method, path, body, bearer: op.bearer };
}

function selectOperation(id) {
  const op = state.ops.find((o) => o.id === id) ?? state.ops[0];
  if (!op) return;
  state.current = op;
  $('operation').value = op.id;
  const summary = $('operation-summary');
  summary.replaceChildren(
    el('span', { className: `auth ${op.bearer ? 'auth-key' : 'auth-none'}` }, op.bearer ? 'API key' : 'no key'),
    ' ',
    op.summary,
  );
  if (location.hash !== `#${op.id}`) history.replaceState(null, '', `#${op.id}`);
  buildForm(op);
  updateSnippets();
}

// ---------------------------------------------------------------------------
// Snippets: curl and scour/client

const shellQuote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

function curlSnippet(req) {
  const lines = [`curl -sS -X ${req.method} ${shellQuote(location.origin + req.path)}`];
  if (req.bearer) lines.push(`-H "Authorization: Bearer $SCOUR_API_KEY"`);
  if (req.body !== undefined) {
    lines.push(`-H 'Content-Type: application/json'`);
    lines.push(`-d ${shellQuote(JSON.stringify(req.body))}`);
  }
  return lines.join(' \\\n  ');
}

function tsSnippet(req) {
  const options = req.bearer
    ? `{ baseUrl: ${JSON.stringify(location.origin)}, apiKey: process.env.SCOUR_API_KEY }`
    : `{ baseUrl: ${JSON.stringify(location.origin)} }`;
  const op = state.current;
  const body = req.body === undefined ? '' : JSON.stringify(req.body, null, 2);
  const known = CLIENT_METHODS[`${op.method} ${op.path}`];
  const tool = /^\/v1\/tools\/([a-z0-9-]+)$/.exec(op.path);
  let call;
  if (known) call = `scour.${known}(${known === 'usage' ? '' : body})`;
  else if (tool) call = `scour.tools[${JSON.stringify(tool[1])}](${body})`;
  else if (op.method === 'GET') call = `scour.getJob(${JSON.stringify(req.path)})`;
  else call = `scour.request(${JSON.stringify(op.method)}, ${JSON.stringify(req.path)}${body ? `, ${body}` : ''})`;
  return [
    `import { Scour } from 'scour/client';`,
    '',
    `const scour = new Scour(${options});`,
    `const result = await ${call};`,
    'console.log(result);',
  ].join('\n');
}

function updateSnippets() {
  if (!state.current) return;
  let curl;
  let ts;
  try {
    const req = currentRequest();
    curl = curlSnippet(req);
    ts = tsSnippet(req);
  } catch (e) {
    curl = `# Fix the form first: ${e.message}`;
    ts = `// Fix the form first: ${e.message}`;
  }
  $('snippet-curl').textContent = curl;
  $('snippet-ts').textContent = ts;
}

async function copyText(text, what) {
  const status = $('copy-status');
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
    } else {
      // Plain http on another host: no Clipboard API; copy through a selected, off-screen textarea.
      const t = el('textarea', { value: text, className: 'offscreen', readOnly: true });
      document.body.append(t);
      t.select();
      const ok = document.execCommand('copy');
      t.remove();
      if (!ok) throw new Error('copy refused');
    }
    status.textContent = `Copied ${what}.`;
  } catch {
    $('snippets').open = true;
    status.textContent = `Could not copy ${what}: select it below.`;
  }
}

// ---------------------------------------------------------------------------
// The answer

function jsonTree(value, key, depth) {
  const keyEl = key === undefined ? '' : el('span', { className: 'key' }, `${key}: `);
  if (value !== null && typeof value === 'object') {
    const isArray = Array.isArray(value);
    const entries = isArray ? value.map((v, i) => [i, v]) : Object.entries(value);
    const count = isArray ? `[${entries.length} item${entries.length === 1 ? '' : 's'}]` : `{${entries.length} key${entries.length === 1 ? '' : 's'}}`;
    const details = el('details', { className: 'node', open: depth < 2 }, el('summary', {}, keyEl, el('span', { className: 'count' }, count)));
    const list = el('ul');
    for (const [k, v] of entries.slice(0, MAX_CHILDREN)) list.append(el('li', {}, jsonTree(v, k, depth + 1)));
    if (entries.length > MAX_CHILDREN) list.append(el('li', { className: 'muted' }, `… ${entries.length - MAX_CHILDREN} more (see Raw)`));
    details.append(list);
    return details;
  }
  if (typeof value === 'string' && (value.length > LONG_STRING || value.includes('\n'))) {
    return el('details', { className: 'node long' },
      el('summary', {}, keyEl, el('span', { className: 'v-string' }, JSON.stringify(value.slice(0, 80)).slice(0, -1) + '…"'), el('span', { className: 'count' }, ` (${value.length} characters)`)),
      el('pre', { className: 'v-string' }, value));
  }
  const cls = value === null ? 'v-null' : `v-${typeof value}`;
  return el('div', { className: 'leaf' }, keyEl, el('span', { className: cls }, JSON.stringify(value)));
}

function metaRow(name, label, value) {
  return [el('dt', {}, label), el('dd', { 'data-name': name }, value)];
}

function renderMeta(res, elapsed, credits) {
  const meta = $('meta');
  meta.replaceChildren();
  meta.append(...metaRow('status', 'Status', `${res.status} ${res.statusText}`.trim()));
  meta.append(...metaRow('time', 'Time', `${Math.round(elapsed)} ms`));
  const id = res.headers.get('x-request-id');
  if (id) meta.append(...metaRow('x-request-id', 'x-request-id', id));
  for (const h of RATE_HEADERS) {
    const v = res.headers.get(h);
    if (v === null) continue;
    const shown = h === 'x-ratelimit-reset' && /^\d+$/.test(v) ? `${v} (${new Date(Number(v) * 1000).toLocaleTimeString()})` : v;
    meta.append(...metaRow(h, h, shown));
  }
  meta.append(...metaRow('credits', 'Credits left', credits === undefined ? '—' : String(credits)));
}

function renderError(status, body) {
  const box = $('error');
  box.replaceChildren();
  if (status < 400) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  // The spec body: { error: "message", code, ..., validation_errors }; a nested { error: { code, message } } is read too.
  const nested = body !== null && typeof body === 'object' && body.error !== null && typeof body.error === 'object' ? body.error : undefined;
  const src = nested ?? (body !== null && typeof body === 'object' ? body : {});
  const code = typeof src.code === 'string' ? src.code : 'ERROR';
  const message = typeof src.message === 'string' ? src.message : typeof src.error === 'string' ? src.error : typeof body === 'string' ? body : '';
  box.append(el('p', {}, el('strong', { className: 'error-code' }, code), ` (HTTP ${status}) `, el('span', { className: 'error-message' }, message)));
  if (typeof src.details === 'string') box.append(el('p', { className: 'muted' }, src.details));
  const issues = Array.isArray(src.validation_errors) ? src.validation_errors : [];
  if (issues.length > 0) {
    box.append(el('ul', { className: 'validation' }, issues.map((v) => el('li', {}, el('code', {}, String(v?.field ?? '')), ': ', String(v?.message ?? '')))));
    for (const v of issues) {
      const top = String(v?.field ?? '').split(/[.[]/)[0];
      for (const f of state.fields) if (f.name === top) f.wrap.classList.add('invalid');
    }
  }
  if (typeof src.upgrade_url === 'string' && safeHref(src.upgrade_url)) box.append(el('p', {}, el('a', { href: safeHref(src.upgrade_url), rel: 'noopener noreferrer', target: '_blank' }, 'Upgrade')));
}

/** screenshot_url values anywhere in the answer (a scrape, a bulk scrape's results), at most 20. */
function findScreenshots(value, out = [], depth = 0) {
  if (out.length >= 20 || depth > 6 || value === null || typeof value !== 'object') return out;
  if (Array.isArray(value)) {
    for (const v of value) findScreenshots(v, out, depth + 1);
    return out;
  }
  for (const [k, v] of Object.entries(value)) {
    if ((k === 'screenshot_url' || k === 'screenshot') && typeof v === 'string') out.push(v);
    else findScreenshots(v, out, depth + 1);
  }
  return out;
}

function renderScreenshots(body) {
  const box = $('screenshots');
  box.replaceChildren();
  for (const url of findScreenshots(body)) {
    let src;
    if (/^data:image\/(png|jpeg);base64,/.test(url)) {
      src = url;
    } else {
      try {
        const u = new URL(url, location.href);
        // This server's screenshot path, loaded from this origin (the page's CSP allows images from 'self' only).
        if (u.pathname.startsWith('/v1/screenshots/')) src = u.pathname + u.search;
      } catch {
        // not a URL
      }
    }
    const href = safeHref(url);
    box.append(el('figure', { className: 'screenshot' },
      src ? el('img', { src, alt: 'Screenshot of the scraped page' }) : '',
      el('figcaption', {}, href ? el('a', { href, target: '_blank', rel: 'noopener noreferrer' }, url) : url)));
  }
}

/** A research report (the synchronous answer, or a job's `result`). */
function reportOf(body) {
  if (body === null || typeof body !== 'object') return undefined;
  const isReport = (b) => b !== null && typeof b === 'object' && ('executive_summary' in b || 'key_insights' in b) && Array.isArray(b.sources_analyzed ?? []);
  if (isReport(body)) return body;
  if (isReport(body.result)) return body.result;
  return undefined;
}

const anchorOf = (id) => `source-${String(id).replace(/[^A-Za-z0-9_-]/g, '_')}`;

function sourceRefs(ids) {
  return ids.filter((x) => typeof x === 'string').map((id) => el('a', { className: 'cite', href: `#${anchorOf(id)}` }, `[${id}]`));
}

function renderReport(body) {
  const box = $('report');
  box.replaceChildren();
  const r = reportOf(body);
  if (!r) return;
  const article = el('article', { className: 'report' });
  article.append(el('h3', {}, 'Research report'));
  if (typeof r.research_query === 'string') article.append(el('p', { className: 'query' }, r.research_query));
  if (typeof r.executive_summary === 'string' && r.executive_summary !== '') {
    article.append(el('h4', {}, 'Summary'));
    for (const para of r.executive_summary.split(/\n{2,}/)) article.append(el('p', {}, para));
    const cited = [...new Set((r.summary_evidence ?? []).map((e) => e?.source_id))];
    if (cited.length > 0) article.append(el('p', { className: 'muted' }, 'Quoted: ', sourceRefs(cited)));
  }
  const insights = Array.isArray(r.key_insights) ? r.key_insights : [];
  if (insights.length > 0) {
    article.append(el('h4', {}, 'Key insights'));
    article.append(el('ol', { className: 'insights' }, insights.map((i) => {
      const ids = Array.isArray(i?.supporting_sources) ? i.supporting_sources : [i?.statement_evidence?.source_id];
      const conf = typeof i?.confidence === 'number' ? ` (confidence ${Math.round(i.confidence * 100)}%)` : '';
      const quote = typeof i?.statement_evidence?.text === 'string' ? el('blockquote', {}, i.statement_evidence.text) : '';
      return el('li', {}, String(i?.statement ?? ''), ' ', sourceRefs(ids), el('span', { className: 'muted' }, conf), quote);
    })));
  }
  const recs = Array.isArray(r.recommendations) ? r.recommendations : [];
  if (recs.length > 0) {
    article.append(el('h4', {}, 'Recommendations'));
    article.append(el('ul', {}, recs.map((x) => el('li', {}, typeof x === 'string' ? x : String(x?.recommendation ?? x?.text ?? JSON.stringify(x))))));
  }
  const sources = Array.isArray(r.sources_analyzed) ? r.sources_analyzed : [];
  if (sources.length > 0) {
    article.append(el('h4', {}, 'Sources'));
    article.append(el('ol', { className: 'sources' }, sources.map((s) => {
      const href = safeHref(s?.url);
      const title = String(s?.title || s?.url || s?.id || '');
      const bits = [s?.type, s?.domain, s?.published_date].filter((x) => typeof x === 'string' && x !== '').join(' · ');
      return el('li', { id: anchorOf(s?.id) },
        el('code', {}, `[${s?.id}] `),
        href ? el('a', { href, target: '_blank', rel: 'noopener noreferrer' }, title) : title,
        bits ? el('span', { className: 'muted' }, ` — ${bits}`) : '',
        s?.used === false ? el('span', { className: 'muted' }, ' (not quoted)') : '');
    })));
  }
  const citations = Array.isArray(r.citations) ? r.citations : [];
  if (citations.length > 0) {
    article.append(el('h4', {}, `Citations${citations[0]?.format ? ` (${citations[0].format})` : ''}`));
    article.append(el('ol', { className: 'citations' }, citations.map((c) => el('li', {}, sourceRefs([c?.source_id]), ' ', el('span', { className: 'citation-text' }, String(c?.text ?? ''))))));
  }
  const warnings = Array.isArray(r.warnings) ? r.warnings : [];
  if (warnings.length > 0) article.append(el('ul', { className: 'warnings' }, warnings.map((w) => el('li', {}, el('code', {}, String(w?.code ?? '')), ': ', String(w?.message ?? '')))));
  box.append(article);
}

function creditsIn(body) {
  if (body === null || typeof body !== 'object') return undefined;
  for (const v of [body.remaining_credits, body.credits_remaining, body.result?.remaining_credits]) if (typeof v === 'number') return v;
  return undefined;
}

async function creditsFromUsage(key) {
  try {
    const res = await fetch('/v1/usage', { headers: { accept: 'application/json', authorization: `Bearer ${key}` } });
    if (!res.ok) return undefined;
    const b = await res.json();
    return typeof b.credits_remaining === 'number' ? b.credits_remaining : undefined;
  } catch {
    return undefined;
  }
}

async function send() {
  const op = state.current;
  if (!op) return;
  for (const f of state.fields) f.wrap.classList.remove('invalid');
  let req;
  try {
    req = currentRequest();
  } catch (e) {
    showPageError(e.message);
    return;
  }
  showPageError('');
  const key = $('api-key').value.trim();
  const headers = { accept: 'application/json' };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  if (req.bearer && key !== '') headers.authorization = `Bearer ${key}`;
  const button = $('send');
  button.disabled = true;
  button.textContent = 'Sending…';
  document.body.dataset.state = 'sending';
  const t0 = performance.now();
  try {
    const res = await fetch(req.path, { method: req.method, headers, body: req.body === undefined ? undefined : JSON.stringify(req.body), cache: 'no-store', credentials: 'omit' });
    const text = await res.text();
    const elapsed = performance.now() - t0;
    let body = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: shown as text
    }
    let credits = creditsIn(body);
    if (credits === undefined && req.bearer && key !== '' && res.ok) credits = await creditsFromUsage(key);
    renderMeta(res, elapsed, credits);
    renderError(res.status, body);
    renderScreenshots(body);
    renderReport(body);
    $('json').replaceChildren(jsonTree(body, undefined, 0));
    $('raw-body').textContent = typeof body === 'string' ? body : JSON.stringify(body, null, 2);
    $('response').hidden = false;
    $('response').dataset.status = String(res.status);
    $('response').scrollIntoView({ block: 'start' });
    document.body.dataset.state = 'done';
  } catch (e) {
    document.body.dataset.state = 'failed';
    showPageError(`The request failed before an answer: ${e.message}`);
  } finally {
    button.disabled = false;
    button.textContent = 'Send';
  }
}

function showPageError(message) {
  const p = $('page-error');
  p.textContent = message;
  p.hidden = message === '';
}

// ---------------------------------------------------------------------------
// Boot

function setupKey() {
  const input = $('api-key');
  input.value = sessionStorage.getItem(KEY_STORAGE) ?? '';
  input.addEventListener('input', () => {
    const v = input.value.trim();
    if (v === '') sessionStorage.removeItem(KEY_STORAGE);
    else sessionStorage.setItem(KEY_STORAGE, v);
  });
  $('key-show').addEventListener('click', () => {
    const hidden = input.type === 'password';
    input.type = hidden ? 'text' : 'password';
    $('key-show').textContent = hidden ? 'Hide' : 'Show';
  });
  $('key-forget').addEventListener('click', () => {
    input.value = '';
    sessionStorage.removeItem(KEY_STORAGE);
  });
}

async function boot() {
  setupKey();
  $('operation').addEventListener('change', (e) => selectOperation(e.target.value));
  $('send').addEventListener('click', send);
  $('copy-curl').addEventListener('click', () => copyText($('snippet-curl').textContent, 'curl'));
  $('copy-ts').addEventListener('click', () => copyText($('snippet-ts').textContent, 'TypeScript'));
  try {
    const res = await fetch('/v1/openapi.json', { headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error(`GET /v1/openapi.json answered ${res.status}`);
    state.ops = listOperations(await res.json());
  } catch (e) {
    showPageError(`Could not load the API description: ${e.message}`);
    return;
  }
  fillOperationSelect(state.ops);
  const fromHash = decodeURIComponent(location.hash.slice(1));
  selectOperation(state.ops.some((o) => o.id === fromHash) ? fromHash : state.ops[0]?.id);
  for (const id of ['send', 'copy-curl', 'copy-ts']) $(id).disabled = false;
  document.body.dataset.state = 'ready';
}

boot();
