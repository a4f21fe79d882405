/**
 * The regex worker, as plain JavaScript source run with
 * `new Worker(WORKER_SOURCE, { eval: true })`: no file path and no
 * TypeScript loader is involved, so it behaves the same under vitest (vite)
 * and when compiled by tsc to dist/.
 *
 * Protocol: the pool posts `{ id, pattern, flags, input, maxMatches,
 * replacement? }`; the worker answers `{ id, ok: true, result }` or
 * `{ id, ok: false, field, message }`. A job that does not answer in time is
 * killed by the pool (worker.terminate()), which is the only way to stop a
 * catastrophically backtracking regex.
 *
 * The source lives in a String.raw template literal: keep it free of
 * backticks, and use `${...}` only to splice in the constants below.
 */

/** Most characters of matched text (match + groups) listed in one response. */
export const MAX_MATCH_TEXT = 500_000;
/** Longest `replaced` result answered; a longer one is a 400 on `replacement`. */
export const MAX_REPLACED = 500_000;

export const WORKER_SOURCE = String.raw`
'use strict';
const { parentPort } = require('node:worker_threads');
const MAX_MATCH_TEXT = ${MAX_MATCH_TEXT};
const MAX_REPLACED = ${MAX_REPLACED};

class Refusal extends Error {
  constructor(field, message) { super(message); this.field = field; }
}

// Copy a null-prototype groups object into a plain one without letting a
// group named __proto__ reach the prototype setter.
function plain(src, map) {
  const out = {};
  for (const k of Object.keys(src)) {
    Object.defineProperty(out, k, { value: map(src[k]), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
const orNull = (v) => (v === undefined ? null : v);
const spanOrNull = (v) => (v === undefined ? null : [v[0], v[1]]);

function shape(m, withIndices) {
  const groups = new Array(m.length - 1);
  for (let k = 1; k < m.length; k++) groups[k - 1] = orNull(m[k]);
  const out = {
    match: m[0],
    index: m.index,
    end: m.index + m[0].length,
    groups: groups,
    named_groups: m.groups ? plain(m.groups, orNull) : null,
  };
  if (withIndices && m.indices) {
    const ix = m.indices;
    const gi = new Array(ix.length - 1);
    for (let k = 1; k < ix.length; k++) gi[k - 1] = spanOrNull(ix[k]);
    out.indices = {
      match: [ix[0][0], ix[0][1]],
      groups: gi,
      named_groups: ix.groups ? plain(ix.groups, spanOrNull) : null,
    };
  }
  return out;
}

// Characters one listed match adds to the response.
function textCost(m) {
  let n = 16 + m[0].length;
  for (let k = 1; k < m.length; k++) if (m[k] !== undefined) n += m[k].length;
  if (m.groups) for (const k of Object.keys(m.groups)) if (m.groups[k] !== undefined) n += m.groups[k].length;
  return n;
}

// The replacement template of String.prototype.replace (GetSubstitution),
// reduced to what is needed to know the length of the result before asking
// the engine for it: literal length and how often each reference occurs.
function compileTemplate(t, nCaps, hasNamed) {
  const tpl = { lit: 0, whole: 0, before: 0, after: 0, caps: new Map(), named: new Map() };
  const n = t.length;
  const isDigit = (c) => c >= 48 && c <= 57;
  let i = 0;
  while (i < n) {
    if (t.charCodeAt(i) !== 36 || i + 1 >= n) { tpl.lit++; i++; continue; }
    const c = t.charCodeAt(i + 1);
    if (c === 36) { tpl.lit++; i += 2; }            // $$
    else if (c === 38) { tpl.whole++; i += 2; }     // $&
    else if (c === 96) { tpl.before++; i += 2; }    // $ backtick
    else if (c === 39) { tpl.after++; i += 2; }     // $'
    else if (isDigit(c)) {                          // $n, $nn
      let digits = 1;
      let idx = c - 48;
      if (i + 2 < n && isDigit(t.charCodeAt(i + 2))) {
        const two = idx * 10 + (t.charCodeAt(i + 2) - 48);
        if (two <= nCaps) { digits = 2; idx = two; }
      }
      if (idx >= 1 && idx <= nCaps) tpl.caps.set(idx, (tpl.caps.get(idx) || 0) + 1);
      else tpl.lit += 1 + digits;
      i += 1 + digits;
    } else if (c === 60 && hasNamed) {              // $<name>
      const gt = t.indexOf('>', i + 2);
      if (gt < 0) { tpl.lit += 2; i += 2; }
      else {
        const name = t.slice(i + 2, gt);
        tpl.named.set(name, (tpl.named.get(name) || 0) + 1);
        i = gt + 1;
      }
    } else { tpl.lit++; i++; }
  }
  return tpl;
}

function substitutionLength(m, inputLength, tpl) {
  const pos = m.index;
  const len = m[0].length;
  let out = tpl.lit + tpl.whole * len + tpl.before * pos + tpl.after * Math.max(0, inputLength - pos - len);
  for (const [k, times] of tpl.caps) if (m[k] !== undefined) out += times * m[k].length;
  if (tpl.named.size > 0 && m.groups) {
    for (const [name, times] of tpl.named) {
      const v = Object.prototype.hasOwnProperty.call(m.groups, name) ? m.groups[name] : undefined;
      if (v !== undefined) out += times * v.length;
    }
  }
  return out;
}

function run(job) {
  const t0 = performance.now();
  // Compiling is done here, not on the main thread: with the v and i flags,
  // set operations on large properties (\p{RGI_Emoji}) can take seconds.
  let re;
  try {
    re = new RegExp(job.pattern, job.flags);
  } catch (e) {
    throw new Refusal('pattern', e && typeof e.message === 'string' ? e.message : String(e));
  }
  const input = job.input;
  const withIndices = re.hasIndices;
  const wantReplace = typeof job.replacement === 'string';
  const matches = [];
  let count = 0;
  let budget = MAX_MATCH_TEXT;
  let listing = true;
  let tpl = null;
  let removed = 0;
  let added = 0;

  const visit = (m) => {
    count++;
    if (listing) {
      if (matches.length >= job.maxMatches) listing = false;
      else {
        const cost = textCost(m);
        if (cost > budget) listing = false;
        else { budget -= cost; matches.push(shape(m, withIndices)); }
      }
    }
    if (wantReplace) {
      if (tpl === null) tpl = compileTemplate(job.replacement, m.length - 1, m.groups !== undefined);
      removed += m[0].length;
      added += substitutionLength(m, input.length, tpl);
      if (added > MAX_REPLACED) throw new Refusal('replacement', 'the replaced text would exceed ' + MAX_REPLACED + ' characters');
    }
  };

  if (re.global) {
    // matchAll advances past zero-length matches (by code point with u/v).
    for (const m of input.matchAll(re)) visit(m);
  } else {
    const m = re.exec(input);
    if (m !== null) visit(m);
  }

  const result = { flags: re.flags, match_count: count, truncated: count > matches.length, matches: matches };
  if (wantReplace) {
    if (input.length - removed + added > MAX_REPLACED) {
      throw new Refusal('replacement', 'the replaced text would exceed ' + MAX_REPLACED + ' characters');
    }
    re.lastIndex = 0;
    result.replaced = input.replace(re, job.replacement);
  }
  result.elapsed_ms = Math.round((performance.now() - t0) * 1000) / 1000;
  return result;
}

parentPort.on('message', (job) => {
  let reply;
  try {
    reply = { id: job.id, ok: true, result: run(job) };
  } catch (e) {
    if (e instanceof Refusal) reply = { id: job.id, ok: false, field: e.field, message: e.message };
    else {
      const msg = e && typeof e.message === 'string' ? e.message : String(e);
      reply = { id: job.id, ok: false, field: 'pattern', message: 'evaluation failed: ' + msg };
    }
  }
  parentPort.postMessage(reply);
});
`;
