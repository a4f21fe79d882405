/**
 * `scour index import|stats`: the local search index from the shell,
 * straight on the configured index (the SQLite file in SCOUR_DATA_DIR, or
 * DATABASE_URL), with or without the server running. An import reads JSON
 * Lines (one document per line, the admin API's document shape), writes in
 * batches, reports bad lines by number and skips them, shows progress on a
 * terminal and ends with one summary line.
 */
import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Effect, Exit } from 'effect';
import { SHARED_COLLECTION, type IndexDocument, type SearchIndex } from '../../core/search.js';
import type { AccountStore } from '../../core/ports.js';
import { collectionProblem, toIndexDocument } from '../../core/index-documents.js';
import { ADMIN_OPTIONS } from './accounts.js';
import { cliArgs } from './args.js';
import { CommandError, UsageError } from './errors.js';

export const INDEX_HELP = `The local search index (the SQLite file in SCOUR_DATA_DIR, or DATABASE_URL):
  scour index import <FILE.jsonl|-> [--collection shared|<account_id>] [--json]
                       one document per line: {"url", "title", "text", "published_date", "language",
                       "country", "type", "author", "site_name", "doi", "safe"}; bad lines are reported and skipped
  scour index stats [--json]
`;

/** Documents per write: big enough to be fast, small enough that searches never wait long for the lock. */
export const IMPORT_BATCH = 500;
/** Bad lines printed one by one; past this, only counted. */
const MAX_REPORTED = 100;

export interface IndexCommandDeps {
  readonly index: SearchIndex;
  readonly store: AccountStore;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** Whether stderr is a terminal (progress bar). */
  readonly tty: boolean;
  readonly stdin: NodeJS.ReadableStream;
}

export async function indexCommand(argv: readonly string[], d: IndexCommandDeps): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'stats') return stats(rest, d);
  if (sub === 'import') return importFile(rest, d);
  throw new UsageError(sub === undefined ? 'scour index needs a subcommand: import or stats' : `unknown index subcommand "${sub}"`);
}

async function stats(argv: readonly string[], d: IndexCommandDeps): Promise<number> {
  const p = cliArgs(argv, ADMIN_OPTIONS);
  if (p.positional.length > 0) throw new UsageError(`unexpected argument "${p.positional[0]}"`);
  const s = await d.index.stats();
  const total = s.collections.reduce((n, c) => n + c.documents, 0);
  if (p.flags.has('json')) {
    d.out(`${JSON.stringify({
      documents: total, bytes: s.bytes,
      collections: s.collections.map((c) => ({ collection: c.collection, documents: c.documents, last_updated: c.lastUpdated === null ? null : new Date(c.lastUpdated).toISOString() })),
    })}\n`);
    return 0;
  }
  d.out(`${total} documents in ${s.collections.length} collection(s)${s.bytes === null ? '' : `, ${(s.bytes / 1024 / 1024).toFixed(1)} MiB on disk`}\n`);
  for (const c of s.collections) {
    d.out(`  ${c.collection.padEnd(28)} ${String(c.documents).padStart(10)}  ${c.lastUpdated === null ? '-' : new Date(c.lastUpdated).toISOString()}\n`);
  }
  return 0;
}

async function importFile(argv: readonly string[], d: IndexCommandDeps): Promise<number> {
  const p = cliArgs(argv, ADMIN_OPTIONS);
  if (p.positional.length !== 1) throw new UsageError('scour index import takes one file (or - for standard input)');
  const file = p.positional[0]!;
  const collection = p.values.get('collection') ?? SHARED_COLLECTION;
  const problem = collectionProblem(collection);
  if (problem !== undefined) throw new UsageError(`--collection ${problem}`);
  if (collection !== SHARED_COLLECTION) {
    const found = await Effect.runPromiseExit(d.store.getAccount(collection));
    if (Exit.isFailure(found)) throw new CommandError('the account store is unavailable');
    if (found.value === undefined) throw new CommandError(`no account ${collection}: use --collection shared or an account id`);
  }
  let size = 0;
  if (file !== '-') {
    try {
      size = statSync(file).size;
    } catch (e) {
      throw new CommandError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    }
  }
  const stream = file === '-' ? d.stdin : createReadStream(file);
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  const json = p.flags.has('json');
  const started = performance.now();
  let lineNo = 0;
  let bytes = 0;
  let indexed = 0;
  let updated = 0;
  let skipped = 0;
  const bad: { line: number; message: string }[] = [];
  let batch: { line: number; document: IndexDocument }[] = [];
  let lastDraw = 0;

  const report = (line: number, message: string) => {
    skipped++;
    if (bad.length < MAX_REPORTED) bad.push({ line, message });
    if (!json && bad.length <= MAX_REPORTED) d.err(`${d.tty ? '\r\x1b[K' : ''}line ${line}: ${message}\n`);
  };
  const draw = (force = false) => {
    if (!d.tty || json) return;
    const now = performance.now();
    if (!force && now - lastDraw < 100) return;
    lastDraw = now;
    const done = indexed + updated;
    const rate = done / Math.max(0.001, (now - started) / 1000);
    const fraction = size > 0 ? Math.min(1, bytes / size) : undefined;
    const bar = fraction === undefined ? '' : `[${'#'.repeat(Math.round(fraction * 30)).padEnd(30, '.')}] ${(fraction * 100).toFixed(0).padStart(3)}% `;
    d.err(`\r\x1b[K${bar}${done} documents, ${skipped} skipped, ${Math.round(rate)}/s`);
  };
  const flush = async () => {
    if (batch.length === 0) return;
    // The same URL twice in one batch: the later line wins, the earlier is reported.
    const byUrl = new Map<string, { line: number; document: IndexDocument }>();
    for (const b of batch) {
      const earlier = byUrl.get(b.document.url);
      if (earlier !== undefined) report(earlier.line, `url repeated at line ${b.line}; the later line was kept`);
      byUrl.set(b.document.url, b);
    }
    batch = [];
    try {
      const w = await d.index.upsert(collection, [...byUrl.values()].map((v) => v.document), Date.now());
      indexed += w.indexed;
      updated += w.updated;
    } catch (e) {
      throw new CommandError(`writing to the index failed after ${indexed + updated} documents: ${e instanceof Error ? e.message : String(e)}`);
    }
    draw();
  };

  try {
    for await (const line of lines) {
      lineNo++;
      bytes += Buffer.byteLength(line) + 1;
      if (line.trim() === '') continue;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch (e) {
        report(lineNo, `not JSON (${e instanceof Error ? e.message.slice(0, 120) : 'parse error'})`);
        continue;
      }
      const r = toIndexDocument(raw);
      if (!r.ok) {
        report(lineNo, r.issues.map((i) => `${i.field} ${i.message}`).join('; '));
        continue;
      }
      batch.push({ line: lineNo, document: r.document });
      if (batch.length >= IMPORT_BATCH) await flush();
    }
    await flush();
  } finally {
    lines.close();
  }
  draw(true);
  if (d.tty && !json) d.err('\n');
  const seconds = (performance.now() - started) / 1000;
  const done = indexed + updated;
  if (json) {
    d.out(`${JSON.stringify({ collection, indexed, updated, skipped, lines: lineNo, seconds: Math.round(seconds * 1000) / 1000, errors: bad })}\n`);
  } else {
    d.out(`imported ${done} documents into ${collection} (${indexed} new, ${updated} updated), ${skipped} line(s) skipped, ${lineNo} lines in ${seconds.toFixed(1)} s (${Math.round(done / Math.max(seconds, 0.001))} documents/s)\n`);
  }
  // Nothing usable in a file that had lines: a failed import.
  return done === 0 && skipped > 0 ? 1 : 0;
}
