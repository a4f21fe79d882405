/**
 * The local search index on SQLite (better-sqlite3), the embedded default:
 * its own connection to the account store's file (scour.db), its own
 * tables (search_*) and its own migration bookkeeping (search_migrations).
 *
 * Storage: an inverted index in a WITHOUT ROWID table keyed (term,
 * collection, document), so a term's postings in a collection are one
 * range scan in document order; each posting carries the term's title and
 * text frequencies, the document's field lengths (so scoring needs no
 * second lookup) and its positions (varints, for phrases, proximity and
 * snippets). Per-collection statistics (documents, token totals, documents
 * per analyser) live in search_collections, are cached in memory and
 * re-read when this connection writes or PRAGMA data_version says another
 * connection did. Ranking is rank.ts's, the same as on PostgreSQL.
 *
 * Writes: documents are analysed before any lock is taken, in slices that
 * yield to the event loop; they are then written in short transactions
 * (BEGIN IMMEDIATE, one synchronous step each, yielding between them), so
 * searches in this process and writers in others (the account store on the
 * same file) wait at most one batch. A batch holds as many documents as fit
 * in about `writeBatchMs` (20 ms of CPU) at the pace the last batches went
 * (between 50 and 2,000; larger batches cost less per document), or exactly
 * `writeBatch`. A call that fits in one batch is atomic; a larger one is
 * written as consecutive atomic batches, in order. Calls of 16 documents or
 * more go to the writer thread (sqlite-writer-thread.ts), whose batches
 * insert each term's new entries as a segment of their own (postings.ts
 * segmentsOf) and merge terms' small blocks when it is idle (mergeStep);
 * smaller calls append to each term's last block on this connection.
 */
import Database from 'better-sqlite3';
import type {
  CollectionStats, IndexDocument, IndexQuery, IndexSearchResult, IndexStats, SearchIndex, StoredDocument, UpsertResult,
} from '../../core/search.js';
import type { Migration } from '../store/migrate.js';
import { migrateSqlite, openSqliteDatabase } from '../store/sqlite/open.js';
import { isMainThread } from 'node:worker_threads';
import {
  checkCollection, inlineAnalyser, latestByUrl, rankingParams, runSearch, yieldToLoop,
  type CollectionInfo, type DocumentAnalyser, type DocumentFacts, type DocumentFilter, type PreparedDocument, type SearchOptions, type SearchStorage,
} from './engine.js';
import { SqliteWriterThread } from './sqlite-writer-thread.js';
import { MergeQueue, PostingList, entriesByTerm, planAppends, planMerge, planRemovals, segmentsOf, type Entry } from './postings.js';
import type { RankingParams } from './rank.js';

interface OldDoc {
  readonly id: number;
  readonly analyser: string;
  readonly title_length: number;
  readonly text_length: number;
  readonly terms: string;
}



export interface SqliteSearchIndexOptions extends SearchOptions {
  /** The database file (the account store's scour.db; its directory is created), or ':memory:'. */
  readonly path: string;
  /** Documents per write transaction, fixed; default: as many as take about writeBatchMs. */
  readonly writeBatch?: number;
  /** How long one write transaction may hold the file's write lock and this process's event loop (default 20 ms of CPU). */
  readonly writeBatchMs?: number;
  /** This connection's page cache in MiB (default 64). */
  readonly cacheMiB?: number;
  /** Who analyses documents (default: this thread, in slices); the composition root hands in the worker pool (analysis-pool.ts). */
  readonly analyser?: DocumentAnalyser;
  /**
   * Write from a thread of its own, with its own connection to the file
   * (sqlite-writer-thread.ts): this thread's searches never wait for a write
   * transaction, and batches can be larger (`writeBatchMs` then bounds how
   * long other writers of the file wait, default 50 ms). Default: true for a
   * file, never for ':memory:' (another connection would not see it).
   */
  readonly writerThread?: boolean;
}

/** The writer thread's connection (sqlite-writer.ts): new entries as segments (a block per term and batch), merged when idle. */
interface SegmentOptions {
  readonly segments?: boolean;
}

/** How long one write transaction holds the file's write lock in the writer thread, by default (ms of wall time). */
export const WRITER_THREAD_BATCH_MS = 50;
/**
 * Calls with fewer documents (or URLs to remove) than this are written on
 * this thread's connection, in one short transaction, as before the writer
 * thread: a crawl's or a scrape's page costs less than the hop, and needs
 * no thread started. SQLite serialises them with the writer thread's.
 */
export const WRITER_THREAD_FROM = 16;
/** Smallest batch the writer thread forms (under load its wall-time measure would shrink batches, and each batch rewrites every term's last block). */
const WRITER_THREAD_MIN_BATCH = 250;

export type SqliteSearchIndex = SearchIndex & {
  /** Waits for the writer thread to finish what it was given (and stop), then closes the connection. */
  close(): Promise<void>;
  /** The ranking parameters in use (for the benchmark's report). */
  readonly ranking: RankingParams;
  /** Starts the analysis threads and the writer thread now and resolves once they are up (an import otherwise starts them). */
  warm(): Promise<void>;
};

export const SQLITE_SEARCH_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'search index: collections, documents, postings',
    sql: `
      CREATE TABLE search_collections (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL UNIQUE,
        documents INTEGER NOT NULL DEFAULT 0,
        title_tokens INTEGER NOT NULL DEFAULT 0,
        text_tokens INTEGER NOT NULL DEFAULT 0,
        last_updated INTEGER
      ) STRICT;
      CREATE TABLE search_collection_analysers (
        cid INTEGER NOT NULL,
        analyser TEXT NOT NULL,
        documents INTEGER NOT NULL,
        PRIMARY KEY (cid, analyser)
      ) WITHOUT ROWID, STRICT;
      CREATE TABLE search_documents (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        cid INTEGER NOT NULL,
        url TEXT NOT NULL,
        published_at INTEGER,
        language TEXT,
        analyser TEXT NOT NULL,
        country TEXT,
        type TEXT NOT NULL,
        safe INTEGER,
        domain TEXT NOT NULL,
        indexed_at INTEGER NOT NULL,
        title_length INTEGER NOT NULL,
        text_length INTEGER NOT NULL,
        author TEXT,
        site_name TEXT,
        doi TEXT,
        title TEXT NOT NULL,
        terms TEXT NOT NULL,
        text TEXT NOT NULL
      ) STRICT;
      CREATE UNIQUE INDEX search_documents_url ON search_documents (cid, url);
      CREATE TABLE search_postings (
        id INTEGER PRIMARY KEY,
        term TEXT NOT NULL,
        cid INTEGER NOT NULL,
        first_doc INTEGER NOT NULL,
        count INTEGER NOT NULL,
        data BLOB NOT NULL
      ) STRICT;
      CREATE UNIQUE INDEX search_postings_term ON search_postings (term, cid, first_doc);
    `,
  },
  {
    version: 2,
    name: 'search index: the explicit documents, for safe_search moderate',
    sql: 'CREATE INDEX search_documents_explicit ON search_documents (cid) WHERE safe = 0;',
  },
];

/** Applies pending search migrations in one IMMEDIATE transaction (processes opening together take turns), in their own table. */
function migrate(db: Database.Database): void {
  migrateSqlite(db, SQLITE_SEARCH_MIGRATIONS, { table: 'search_migrations', label: 'SQLite search index' });
}

const DOC_COLUMNS = `d.id, c.name AS collection, d.url, d.title, d.text, d.published_at, d.language, d.analyser, d.country, d.type,
  d.author, d.site_name, d.doi, d.safe, d.domain, d.indexed_at`;

interface DocRow {
  id: number;
  collection: string;
  url: string;
  title: string;
  text: string;
  published_at: number | null;
  language: string | null;
  analyser: string;
  country: string | null;
  type: StoredDocument['type'];
  author: string | null;
  site_name: string | null;
  doi: string | null;
  safe: number | null;
  domain: string;
  indexed_at: number;
}

function toStored(r: DocRow): StoredDocument & { analyser: string } {
  return {
    collection: r.collection,
    url: r.url,
    title: r.title,
    text: r.text,
    publishedAt: r.published_at,
    language: r.language,
    country: r.country,
    type: r.type,
    author: r.author,
    siteName: r.site_name,
    doi: r.doi,
    safe: r.safe === null ? null : r.safe === 1,
    domain: r.domain,
    indexedAt: r.indexed_at,
    analyser: r.analyser,
  };
}

/** Opens (creating and migrating) the index in the given file. Throws when it cannot. */
export function openSqliteSearchIndex(options: SqliteSearchIndexOptions): SqliteSearchIndex {
  return openSqliteDatabase(options.path, (db) => {
    // WAL with synchronous=NORMAL cannot corrupt; a power cut may lose the last commits, which a re-import restores.
    db.pragma('synchronous = NORMAL');
    // A larger page cache for this connection (the postings' pages are re-read and re-written batch after batch).
    db.pragma(`cache_size = -${Math.max(2, Math.floor(options.cacheMiB ?? 64)) * 1024}`);
    const encoding = db.pragma('encoding', { simple: true });
    if (encoding !== 'UTF-8') throw new Error(`the search index needs a UTF-8 database; ${options.path} is ${String(encoding)}`);
    migrate(db);
    const fixed = options.writeBatch === undefined ? undefined : Math.max(1, Math.floor(options.writeBatch));
    const threaded = options.writerThread ?? options.path !== ':memory:';
    const writer = threaded && options.path !== ':memory:'
      ? new SqliteWriterThread({ path: options.path, cacheMiB: options.cacheMiB, writeBatch: fixed, writeBatchMs: options.writeBatchMs ?? WRITER_THREAD_BATCH_MS })
      : undefined;
    const segments = (options as SegmentOptions).segments === true ? new MergeQueue() : undefined;
    return new SqliteIndex(db, rankingParams(options), fixed, options.writeBatchMs ?? 20, options.analyser ?? inlineAnalyser, writer, segments);
  });
}

interface Delta {
  documents: number;
  titleTokens: number;
  textTokens: number;
  analysers: Map<string, number>;
}

class SqliteIndex implements SearchIndex, SearchStorage {
  private readonly s;
  private readonly filterStatements = new Map<string, Database.Statement>();
  private cache = new Map<string, CollectionInfo | null>();
  private dataVersion = -1;
  private closed = false;

  /** Documents in the next write batch (adapted to writeBatchMs unless fixed). */
  private batch: number;

  constructor(
    private readonly db: Database.Database, readonly ranking: RankingParams, private readonly fixedBatch: number | undefined, private readonly batchMs: number,
    private readonly analyser: DocumentAnalyser = inlineAnalyser, private readonly writer?: SqliteWriterThread,
    /** Set on the writer thread's connection: writes insert segments, and terms with many small blocks wait here for a merge. */
    private readonly merges?: MergeQueue,
  ) {
    this.batch = fixedBatch ?? (isMainThread ? 100 : WRITER_THREAD_MIN_BATCH);
    const p = (sql: string) => db.prepare(sql);
    this.s = {
      dataVersion: p('PRAGMA data_version').pluck(),
      collection: p('SELECT id, name, documents, title_tokens, text_tokens, last_updated FROM search_collections WHERE name = ?'),
      analysers: p('SELECT analyser, documents FROM search_collection_analysers WHERE cid = ?'),
      ensureCollection: p('INSERT INTO search_collections (name) VALUES (?) ON CONFLICT (name) DO NOTHING'),
      collectionId: p('SELECT id FROM search_collections WHERE name = ?').pluck(),
      blocks: p('SELECT count, data FROM search_postings WHERE term = ? AND cid = ? ORDER BY first_doc').raw(),
      termBlocks: p('SELECT id, count, data FROM search_postings WHERE term = ? AND cid = ? ORDER BY first_doc'),
      mergeBlock: p('UPDATE search_postings SET first_doc = ?, count = ?, data = ? WHERE id = ?'),
      blockOf: p('SELECT id, data FROM search_postings WHERE term = ? AND cid = ? AND first_doc <= ? ORDER BY first_doc DESC LIMIT 1'),
      updateBlock: p('UPDATE search_postings SET first_doc = ?, count = ?, data = ? WHERE id = ?'),
      // One statement per block, prepared once: cheaper than one statement over a JSON list of hex blobs (half the time per append).
      lastBlock: p('SELECT id, count FROM search_postings WHERE term = ? AND cid = ? ORDER BY first_doc DESC LIMIT 1').raw(),
      // Blob || blob is a byte concatenation in a UTF-8 database (checked at open); first_doc is left alone, and so is its index.
      appendBlock: p('UPDATE search_postings SET count = count + ?, data = CAST(data || ? AS BLOB) WHERE id = ?'),
      insertBlock: p('INSERT INTO search_postings (term, cid, first_doc, count, data) VALUES (?, ?, ?, ?, ?)'),
      deleteBlock: p('DELETE FROM search_postings WHERE id = ?'),
      findDoc: p('SELECT id, analyser, title_length, text_length, terms FROM search_documents WHERE cid = ? AND url = ?'),
      insertDoc: p(`INSERT INTO search_documents (cid, url, published_at, language, analyser, country, type, safe, domain, indexed_at,
        title_length, text_length, author, site_name, doi, title, terms, text)
        VALUES (@cid, @url, @publishedAt, @language, @analyser, @country, @type, @safe, @domain, @now,
        @titleLength, @textLength, @author, @siteName, @doi, @title, @terms, @text)`),
      updateDoc: p(`UPDATE search_documents SET published_at = @publishedAt, language = @language, analyser = @analyser, country = @country,
        type = @type, safe = @safe, domain = @domain, indexed_at = @now, title_length = @titleLength, text_length = @textLength,
        author = @author, site_name = @siteName, doi = @doi, title = @title, terms = @terms, text = @text WHERE id = @id`),
      deleteDoc: p('DELETE FROM search_documents WHERE id = ?'),
      updateCollection: p(`UPDATE search_collections SET documents = documents + ?, title_tokens = title_tokens + ?, text_tokens = text_tokens + ?,
        last_updated = ? WHERE id = ?`),
      updateAnalyser: p(`INSERT INTO search_collection_analysers (cid, analyser, documents) VALUES (?, ?, ?)
        ON CONFLICT (cid, analyser) DO UPDATE SET documents = documents + excluded.documents`),
      dropEmptyAnalysers: p('DELETE FROM search_collection_analysers WHERE cid = ? AND documents <= 0'),
      documents: p(`SELECT ${DOC_COLUMNS} FROM search_documents d JOIN search_collections c ON c.id = d.cid
        WHERE d.id IN (SELECT value FROM json_each(?))`),
      get: p(`SELECT ${DOC_COLUMNS} FROM search_documents d JOIN search_collections c ON c.id = d.cid
        WHERE c.name IN (SELECT value FROM json_each(?)) AND d.url IN (SELECT value FROM json_each(?))
        ORDER BY d.id`),
      explicit: p('SELECT id FROM search_documents WHERE safe = 0 AND cid IN (SELECT value FROM json_each(?))').pluck(),
      stats: p('SELECT name, documents, last_updated FROM search_collections ORDER BY name'),
      bytes: p(`SELECT sum(pgsize) FROM dbstat WHERE name IN
        (SELECT name FROM sqlite_schema WHERE tbl_name LIKE 'search\\_%' ESCAPE '\\' AND tbl_name <> 'search_migrations')`).pluck(),
    };
  }

  // ------------------------------------------------------------ SearchStorage

  /** Drops cached statistics when another connection (or process) has committed since the last look. */
  private fresh(): void {
    const v = this.s.dataVersion.get() as number;
    if (v !== this.dataVersion) {
      this.dataVersion = v;
      this.cache.clear();
    }
  }

  private info(name: string): CollectionInfo | null {
    let info = this.cache.get(name);
    if (info !== undefined) return info;
    const r = this.s.collection.get(name) as { id: number; name: string; documents: number; title_tokens: number; text_tokens: number; last_updated: number | null } | undefined;
    if (r === undefined) info = null;
    else {
      const analysers = new Map<string, number>();
      for (const a of this.s.analysers.all(r.id) as { analyser: string; documents: number }[]) analysers.set(a.analyser, a.documents);
      info = { id: r.id, name: r.name, documents: r.documents, titleTokens: r.title_tokens, textTokens: r.text_tokens, lastUpdated: r.last_updated, analysers };
    }
    this.cache.set(name, info);
    return info;
  }

  async collections(names: readonly string[]): Promise<readonly CollectionInfo[]> {
    this.fresh();
    return names.map((n) => this.info(n)).filter((c): c is CollectionInfo => c !== null);
  }

  async postings(forms: readonly string[], collectionIds: readonly number[]): Promise<Map<string, PostingList>> {
    const out = new Map<string, PostingList>();
    for (const f of forms) {
      const data: Uint8Array[] = [];
      let count = 0;
      for (const cid of collectionIds) {
        for (const [n, d] of this.s.blocks.all(f, cid) as [number, Uint8Array][]) {
          count += n;
          data.push(d);
        }
      }
      if (count > 0) out.set(f, new PostingList(data, count));
    }
    return out;
  }

  async filter(docs: readonly number[], f: DocumentFilter): Promise<Map<number, DocumentFacts>> {
    const where: string[] = [];
    const args: unknown[] = [JSON.stringify(docs)];
    if (f.country !== undefined) { where.push('country = ?'); args.push(f.country); }
    if (f.language !== undefined) { where.push('language = ?'); args.push(f.language); }
    if (f.publishedAfter !== undefined) { where.push('published_at >= ?'); args.push(f.publishedAfter); }
    if (f.safe === 'moderate') where.push('(safe IS NULL OR safe = 1)');
    if (f.safe === 'strict') where.push('safe = 1');
    if (f.news) where.push(`type IN ('news', 'article') AND published_at IS NOT NULL`);
    const sql = `SELECT id, published_at, domain FROM search_documents WHERE id IN (SELECT value FROM json_each(?))${where.map((w) => ` AND ${w}`).join('')}`;
    let st = this.filterStatements.get(sql);
    if (st === undefined) this.filterStatements.set(sql, (st = this.db.prepare(sql).raw()));
    const out = new Map<number, DocumentFacts>();
    for (const [id, publishedAt, domain] of st.all(...args) as [number, number | null, string][]) out.set(id, { publishedAt, domain });
    return out;
  }

  async documents(docs: readonly number[]): Promise<Map<number, StoredDocument & { readonly analyser: string }>> {
    const out = new Map<number, StoredDocument & { analyser: string }>();
    if (docs.length === 0) return out;
    for (const r of this.s.documents.all(JSON.stringify(docs)) as DocRow[]) out.set(r.id, toStored(r));
    return out;
  }

  async explicit(collectionIds: readonly number[]): Promise<ReadonlySet<number>> {
    return new Set(this.s.explicit.all(JSON.stringify(collectionIds)) as number[]);
  }

  // ------------------------------------------------------------ SearchIndex

  private open(): void {
    if (this.closed) throw new Error('the search index is closed');
  }

  async search(query: IndexQuery): Promise<IndexSearchResult> {
    this.open();
    return runSearch(this, query, this.ranking);
  }

  async upsert(collection: string, documents: readonly IndexDocument[], now: number): Promise<UpsertResult> {
    this.open();
    checkCollection(collection);
    const docs = latestByUrl(documents);
    if (docs.length === 0) return { indexed: 0, updated: 0 };
    if (this.writer !== undefined && docs.length >= WRITER_THREAD_FROM) {
      // Each part goes to the writer thread as soon as it is analysed; the writer batches parts of one call together.
      const call = this.writer.begin(collection, now);
      try {
        for await (const part of this.analyser.analyse(docs)) {
          this.open();
          call.send(part);
        }
      } catch (e) {
        call.abandon();
        throw e;
      }
      const r = await call.end();
      this.cache.clear();
      return r;
    }
    let indexed = 0;
    let updated = 0;
    let first = true;
    for await (const part of this.analyser.analyse(docs)) {
      if (!first) await yieldToLoop();
      first = false;
      const r = await this.writePrepared(collection, part, now);
      indexed += r.indexed;
      updated += r.updated;
    }
    return { indexed, updated };
  }

  /** Writes prepared documents (of distinct URLs) in consecutive batches, yielding to the event loop between them. */
  async writePrepared(collection: string, prepared: readonly PreparedDocument[], now: number): Promise<UpsertResult> {
    let indexed = 0;
    let updated = 0;
    for (let i = 0; i < prepared.length;) {
      if (i > 0) await yieldToLoop();
      this.open();
      const r = this.writeBatch(collection, prepared.slice(i, i + this.batch), now);
      i += r.written;
      indexed += r.indexed;
      updated += r.updated;
    }
    return { indexed, updated };
  }

  /** Documents the next batch should hold. */
  nextBatch(): number {
    return this.batch;
  }

  /**
   * Writes one batch in one transaction and sizes the next from how long it
   * took: CPU time on the main thread (on a busy machine the wall clock also
   * counts other processes' turns), wall time in the writer thread (what
   * other writers of the file wait; process CPU time there counts every thread).
   */
  writeBatch(collection: string, batch: readonly PreparedDocument[], now: number): UpsertResult & { written: number } {
    const c0 = isMainThread ? process.cpuUsage() : undefined;
    const t0 = performance.now();
    const r = this.writeDocuments(collection, batch, now);
    let ms: number;
    if (c0 !== undefined) {
      const c = process.cpuUsage(c0);
      ms = (c.user + c.system) / 1000;
    } else {
      ms = performance.now() - t0;
    }
    this.adapt(batch.length, ms);
    return { ...r, written: batch.length };
  }

  private collectionId(name: string): number {
    this.s.ensureCollection.run(name);
    return this.s.collectionId.get(name) as number;
  }

  /** Removes documents' entries from their blocks: `docs` by term. */
  private removeEntries(cid: number, docs: Map<string, number[]>): void {
    if (docs.size === 0) return;
    const blocks = new Map<number, Uint8Array>();
    const gone = new Set<number>();
    for (const [term, ids] of docs) {
      for (const id of ids) {
        gone.add(id);
        const b = this.s.blockOf.get(term, cid, id) as { id: number; data: Uint8Array } | undefined;
        if (b !== undefined && !blocks.has(b.id)) blocks.set(b.id, b.data);
      }
    }
    const { updates, deletes } = planRemovals(blocks, gone);
    for (const [id, firstDoc, count, data] of updates) this.s.updateBlock.run(firstDoc, count, data, id);
    for (const id of deletes) this.s.deleteBlock.run(id);
  }

  /**
   * Appends new documents' entries (ids above every stored one) to each
   * term's last block (blob concatenation in SQL), opening blocks as they
   * fill.
   */
  private appendEntries(cid: number, entries: Map<string, Entry[]>): void {
    if (entries.size === 0) return;
    const last = new Map<string, [number, number]>();
    for (const term of entries.keys()) {
      const b = this.s.lastBlock.get(term, cid) as [number, number] | undefined;
      if (b !== undefined) last.set(term, b);
    }
    const { appends, inserts } = planAppends(entries, last);
    for (const [id, n, data] of appends) this.s.appendBlock.run(n, data, id);
    for (const [term, first, n, data] of inserts) this.s.insertBlock.run(term, cid, first, n, data);
  }

  /**
   * New documents' entries as blocks of their own (a segment per term):
   * inserts only, nothing read or rewritten. Terms left with a small block
   * are counted for the merger.
   */
  private insertSegments(cid: number, docs: Parameters<typeof segmentsOf>[0]): void {
    const merges = this.merges!;
    for (const [term, first, n, data] of segmentsOf(docs, (t) => merges.note(cid, t))) this.s.insertBlock.run(term, cid, first, n, data);
  }

  /**
   * One step of the background merge (the writer thread calls it when it
   * has nothing else queued): the terms due, in one transaction of at most
   * about `budgetMs` (default: a write batch's), each term's runs of small
   * blocks rewritten into full ones. Searches see the blocks before or
   * after, the same entries either way. Returns whether terms are still due.
   */
  mergesDue(): boolean {
    return (this.merges?.pending ?? 0) > 0;
  }

  mergeStep(budgetMs = this.batchMs): boolean {
    const merges = this.merges;
    if (merges === undefined || merges.pending === 0 || this.closed) return false;
    const t0 = performance.now();
    this.db.transaction(() => {
      while (merges.pending > 0 && performance.now() - t0 < budgetMs) {
        for (const [cid, term] of merges.take(16)) {
          const blocks = this.s.termBlocks.all(term, cid) as { id: number; count: number; data: Uint8Array }[];
          const { deletes, updates, inserts } = planMerge(blocks);
          for (const id of deletes) this.s.deleteBlock.run(id);
          for (const [id, first, n, data] of updates) this.s.mergeBlock.run(first, n, data, id);
          for (const [first, n, data] of inserts) this.s.insertBlock.run(term, cid, first, n, data);
        }
      }
    }).immediate();
    return merges.pending > 0;
  }

  private applyDelta(cid: number, d: Delta, now: number): void {
    this.s.updateCollection.run(d.documents, d.titleTokens, d.textTokens, now, cid);
    for (const [a, n] of d.analysers) if (n !== 0) this.s.updateAnalyser.run(cid, a, n);
    this.s.dropEmptyAnalysers.run(cid);
  }

  private writeDocuments(collection: string, docs: readonly PreparedDocument[], now: number): UpsertResult {
    const r = this.db.transaction(() => {
      const cid = this.collectionId(collection);
      const delta: Delta = { documents: 0, titleTokens: 0, textTokens: 0, analysers: new Map() };
      const bump = (a: string, n: number) => delta.analysers.set(a, (delta.analysers.get(a) ?? 0) + n);
      const gone = new Map<string, number[]>();
      const written: { id: number; titleLength: number; textLength: number; postings: PreparedDocument['postings'] }[] = [];
      let indexed = 0;
      let updated = 0;
      for (const d of docs) {
        const old = this.s.findDoc.get(cid, d.url) as OldDoc | undefined;
        if (old !== undefined) {
          // A replaced document gets a new id (ids only grow, so its entries are appended like any new one's).
          this.forget(old, gone, delta);
          this.s.deleteDoc.run(old.id);
          updated++;
        } else {
          indexed++;
        }
        const id = Number(this.s.insertDoc.run({
          cid, url: d.url, publishedAt: d.publishedAt, language: d.language, analyser: d.analyser, country: d.country, type: d.type,
          safe: d.safe === null ? null : d.safe ? 1 : 0, domain: d.domain, now, titleLength: d.titleLength, textLength: d.textLength,
          author: d.author, siteName: d.siteName, doi: d.doi, title: d.title, terms: d.postings.terms.join(' '), text: d.text,
        }).lastInsertRowid);
        delta.documents++;
        delta.titleTokens += d.titleLength;
        delta.textTokens += d.textLength;
        bump(d.analyser, 1);
        written.push({ id, titleLength: d.titleLength, textLength: d.textLength, postings: d.postings });
      }
      this.removeEntries(cid, gone);
      if (this.merges !== undefined) this.insertSegments(cid, written);
      else this.appendEntries(cid, entriesByTerm(written));
      this.applyDelta(cid, delta, now);
      return { indexed, updated };
    }).immediate();
    this.cache.clear();
    return r;
  }

  /** Notes a stored document's entries for removal and takes it out of the statistics. */
  private forget(old: OldDoc, gone: Map<string, number[]>, delta: Delta): void {
    if (old.terms !== '') {
      for (const t of old.terms.split(' ')) {
        const list = gone.get(t);
        if (list === undefined) gone.set(t, [old.id]);
        else list.push(old.id);
      }
    }
    delta.documents--;
    delta.titleTokens -= old.title_length;
    delta.textTokens -= old.text_length;
    delta.analysers.set(old.analyser, (delta.analysers.get(old.analyser) ?? 0) - 1);
  }

  /** Sizes the next batch so it takes about batchMs of CPU at the pace of this one (smoothed). */
  private adapt(documents: number, ms: number): void {
    if (this.fixedBatch !== undefined || documents < 8 || ms <= 0) return;
    const fit = (this.batchMs * documents) / ms;
    this.batch = Math.round(Math.min(2000, Math.max(isMainThread ? 50 : WRITER_THREAD_MIN_BATCH, 0.5 * this.batch + 0.5 * fit)));
  }

  async remove(collection: string, urls: readonly string[], now: number): Promise<number> {
    this.open();
    checkCollection(collection);
    if (this.writer !== undefined && new Set(urls).size >= WRITER_THREAD_FROM) {
      // In the writer's queue, after the writes asked for before it.
      const n = await this.writer.remove(collection, [...new Set(urls)], now);
      this.cache.clear();
      return n;
    }
    return this.removeHere(collection, urls, now);
  }

  /** remove() on this connection. */
  async removeHere(collection: string, urls: readonly string[], now: number): Promise<number> {
    this.open();
    const unique = [...new Set(urls)];
    let removed = 0;
    const size = this.fixedBatch ?? Math.max(this.batch, 100);
    for (let i = 0; i < unique.length; i += size) {
      if (i > 0) await yieldToLoop();
      this.open();
      const batch = unique.slice(i, i + size);
      removed += this.db.transaction(() => {
        const cid = this.s.collectionId.get(collection) as number | undefined;
        if (cid === undefined) return 0;
        const delta: Delta = { documents: 0, titleTokens: 0, textTokens: 0, analysers: new Map() };
        const gone = new Map<string, number[]>();
        let n = 0;
        for (const url of batch) {
          const old = this.s.findDoc.get(cid, url) as OldDoc | undefined;
          if (old === undefined) continue;
          this.forget(old, gone, delta);
          this.s.deleteDoc.run(old.id);
          n++;
        }
        if (n > 0) {
          this.removeEntries(cid, gone);
          this.applyDelta(cid, delta, now);
        }
        return n;
      }).immediate();
      this.cache.clear();
    }
    return removed;
  }

  async get(collections: readonly string[], urls: readonly string[]): Promise<readonly StoredDocument[]> {
    this.open();
    if (collections.length === 0 || urls.length === 0) return [];
    return (this.s.get.all(JSON.stringify([...new Set(collections)]), JSON.stringify([...new Set(urls)])) as DocRow[]).map((r) => {
      const { analyser: _a, ...d } = toStored(r);
      return d;
    });
  }

  async stats(): Promise<IndexStats> {
    this.open();
    const collections: CollectionStats[] = (this.s.stats.all() as { name: string; documents: number; last_updated: number | null }[])
      .map((r) => ({ collection: r.name, documents: r.documents, lastUpdated: r.last_updated }));
    let bytes: number | null = null;
    try {
      bytes = (this.s.bytes.get() as number | null) ?? 0;
    } catch {
      bytes = null;
    }
    return { collections, bytes };
  }

  /** Closes the connection, after the writer thread (if any) has finished what it was given and closed its own. */
  /**
   * Starts what a first import would otherwise start (the analysis threads, the writer thread)
   * and resolves once they are up. Optional: an import without it starts them itself.
   */
  async warm(): Promise<void> {
    await Promise.all([this.analyser.ready?.(), this.writer?.warm()]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.writer?.close();
    } finally {
      this.db.close();
    }
  }
}

/** What the writer thread (sqlite-writer.ts) uses of an index opened on its own connection. */
export interface SqliteSearchWriter {
  nextBatch(): number;
  writeBatch(collection: string, batch: readonly PreparedDocument[], now: number): UpsertResult & { written: number };
  /** One bounded step of merging small blocks; whether more is due. */
  mergeStep(budgetMs?: number): boolean;
  /** Whether terms are due for a merge. */
  mergesDue(): boolean;
  removeHere(collection: string, urls: readonly string[], now: number): Promise<number>;
  close(): Promise<void>;
}

/** The index on a connection of its own that writes in this thread (the writer thread's). */
export function openSqliteSearchWriter(options: Omit<SqliteSearchIndexOptions, 'writerThread' | 'analyser'>): SqliteSearchWriter {
  return openSqliteSearchIndex({ ...options, writerThread: false, segments: true } as SqliteSearchIndexOptions) as unknown as SqliteSearchWriter;
}
