/**
 * The local search index on PostgreSQL (shared mode, DATABASE_URL): the
 * same tables, block postings and ranking code as the SQLite index, so both
 * rank the same documents the same way.
 *
 * Why not ts_rank or a GIN index: ts_rank has no IDF (no collection
 * statistics at all), and a GIN index (tsvector, or text[] with &&) finds
 * candidate documents but not the term frequencies, field lengths and
 * positions BM25F, phrases and proximity need. The postings here are that
 * index: a B-tree on (term, collection, first document) over blocks of up to
 * 128 entries each carrying them, so a query reads a few rows per term in
 * one round trip and never sends a user's word as syntax (every term is a
 * bound text[] element compared with =).
 *
 * Writes: one transaction per call (atomic; readers are never blocked under
 * MVCC), writers of one collection serialised by a transaction-level
 * advisory lock so new documents' ids (and blocks) stay in order. A call of
 * SEGMENTS_FROM documents or more inserts each term's new entries as a
 * segment (postings.ts segmentsOf); terms that gather small blocks are
 * merged after the call, in the background, under the same lock.
 * Migrations run under a session advisory lock, with their own bookkeeping
 * table (search_migrations) beside the account store's.
 */
import pg from 'pg';
import type {
  CollectionStats, IndexDocument, IndexQuery, IndexSearchResult, IndexStats, SearchIndex, StoredDocument, UpsertResult,
} from '../../core/search.js';
import type { Migration } from '../store/migrate.js';
import { driverMessage, migratePostgres } from '../store/postgres/index.js';
import { KeyedBatcher } from '../store/postgres/batch.js';
import {
  checkCollection, clean, inlineAnalyser, latestByUrl, rankingParams, runSearch, yieldToLoop,
  type CollectionInfo, type DocumentAnalyser, type DocumentFacts, type DocumentFilter, type PreparedDocument, type SearchOptions, type SearchStorage,
} from './engine.js';
import { MERGE_AFTER_MS, MergeQueue, PostingList, entriesByTerm, planAppends, planMerge, planRemovals, segmentsOf, type Entry } from './postings.js';
import type { RankingParams } from './rank.js';

export type PostgresSearchIndexOptions = SearchOptions & {
  /** Documents written per step of an upsert's one transaction (default 100; the event loop gets a turn between steps). */
  readonly writeSlice?: number;
  /** Who analyses documents (default: this thread, in slices); the composition root hands in the worker pool (analysis-pool.ts). */
  readonly analyser?: DocumentAnalyser;
} & (
  | {
    /** postgres://user:password@host:port/database */
    readonly url: string;
    /** Pool size (default 10). */
    readonly max?: number;
    readonly connectionTimeoutMillis?: number;
  }
  | {
    /** A pool to use (not ended by close()). Its bigint columns may come back as strings: they are converted. */
    readonly pool: pg.Pool;
  }
);

export type PostgresSearchIndex = SearchIndex & {
  close(): Promise<void>;
  readonly ranking: RankingParams;
  /** Starts the analysis threads now and resolves once they are up (an import otherwise starts them). */
  warm(): Promise<void>;
};

/** Session advisory lock key serialising this index's migrations across processes ("search" in ASCII). */
const MIGRATION_LOCK = '115101097114099104';
/** First key of the transaction-level lock that serialises writers of one collection (the second is its id). */
const WRITE_LOCK = 0x53434f55;
/**
 * Calls with at least this many documents write each term's new entries as
 * blocks of their own (segments: inserts only, merged later in the
 * background); smaller ones append to each term's last block, as a crawl's
 * page would otherwise leave a block per term.
 */
export const SEGMENTS_FROM = 16;
/** Terms merged per background merge transaction (each holds the collection's write lock that long). */
const MERGE_TERMS = 200;

export const POSTGRES_SEARCH_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'search index: collections, documents, postings',
    sql: `
      CREATE TABLE search_collections (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name text NOT NULL UNIQUE,
        documents bigint NOT NULL DEFAULT 0,
        title_tokens bigint NOT NULL DEFAULT 0,
        text_tokens bigint NOT NULL DEFAULT 0,
        last_updated bigint
      );
      CREATE TABLE search_collection_analysers (
        cid integer NOT NULL,
        analyser text NOT NULL,
        documents bigint NOT NULL,
        PRIMARY KEY (cid, analyser)
      );
      CREATE TABLE search_documents (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        cid integer NOT NULL,
        url text NOT NULL,
        published_at bigint,
        language text,
        analyser text NOT NULL,
        country text,
        type text NOT NULL,
        safe boolean,
        domain text NOT NULL,
        indexed_at bigint NOT NULL,
        title_length integer NOT NULL,
        text_length integer NOT NULL,
        author text,
        site_name text,
        doi text,
        title text NOT NULL,
        terms text[] NOT NULL,
        text text NOT NULL
      );
      CREATE UNIQUE INDEX search_documents_url ON search_documents (cid, url);
      CREATE TABLE search_postings (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        term text COLLATE "C" NOT NULL,
        cid integer NOT NULL,
        first_doc bigint NOT NULL,
        count integer NOT NULL,
        data bytea NOT NULL
      );
      CREATE UNIQUE INDEX search_postings_term ON search_postings (term, cid, first_doc);
    `,
  },
  {
    version: 2,
    name: 'search index: the explicit documents, for safe_search moderate',
    sql: 'CREATE INDEX search_documents_explicit ON search_documents (cid) WHERE safe = false;',
  },
];

const INT8_OID = 20;
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? Number : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/** Pending search migrations, each in its own transaction, under the index's own advisory lock and table. */
function migrate(pool: pg.Pool): Promise<void> {
  return migratePostgres(pool, POSTGRES_SEARCH_MIGRATIONS, { table: 'search_migrations', lock: MIGRATION_LOCK, label: 'PostgreSQL search index' });
}

/** Connects, migrates and returns the index; rejects with a clear Error when it cannot. */
export async function openPostgresSearchIndex(options: PostgresSearchIndexOptions): Promise<PostgresSearchIndex> {
  const own = !('pool' in options);
  const url = 'url' in options ? options.url : undefined;
  const pool = 'pool' in options
    ? options.pool
    : new pg.Pool({ connectionString: options.url, max: options.max ?? 10, connectionTimeoutMillis: options.connectionTimeoutMillis ?? 5000, types });
  if (own) pool.on('error', () => {});
  try {
    await migrate(pool);
  } catch (e) {
    if (own) await pool.end().catch(() => {});
    throw new Error(`Cannot open the PostgreSQL search index: ${driverMessage(e, url)}`, { cause: e });
  }
  return new PostgresIndex(pool, own, rankingParams(options), Math.max(1, Math.floor(options.writeSlice ?? 100)), options.analyser ?? inlineAnalyser);
}

const DOC_COLUMNS = `d.id, c.name AS collection, d.url, d.title, d.text, d.published_at, d.language, d.analyser, d.country, d.type,
  d.author, d.site_name, d.doi, d.safe, d.domain, d.indexed_at`;

interface DocRow {
  id: number | string;
  collection: string;
  url: string;
  title: string;
  text: string;
  published_at: number | string | null;
  language: string | null;
  analyser: string;
  country: string | null;
  type: StoredDocument['type'];
  author: string | null;
  site_name: string | null;
  doi: string | null;
  safe: boolean | null;
  domain: string;
  indexed_at: number | string;
}

const num = (v: number | string): number => (typeof v === 'number' ? v : Number(v));
const numOrNull = (v: number | string | null): number | null => (v === null ? null : num(v));

function toStored(r: DocRow): StoredDocument & { analyser: string } {
  return {
    collection: r.collection,
    url: r.url,
    title: r.title,
    text: r.text,
    publishedAt: numOrNull(r.published_at),
    language: r.language,
    country: r.country,
    type: r.type,
    author: r.author,
    siteName: r.site_name,
    doi: r.doi,
    safe: r.safe,
    domain: r.domain,
    indexedAt: num(r.indexed_at),
    analyser: r.analyser,
  };
}

interface OldDoc {
  id: number | string;
  analyser: string;
  title_length: number;
  text_length: number;
  terms: string[];
}

/** Exported for bench:http's same-run comparison (servers/billing-before.mjs); open it with openPostgresSearchIndex. */
export class PostgresIndex implements SearchIndex, SearchStorage {
  private closed = false;
  /** Terms with many small blocks (from segments this process wrote), waiting for the background merge. */
  private readonly merges = new MergeQueue();
  /** Upsert calls in flight here (the merge waits for none). */
  private writing = 0;
  /** The background merge, while it runs. */
  private merging: Promise<void> | undefined;
  /** The merge waits for MERGE_AFTER_MS without an upsert here (an import's calls are not slowed by it). */
  private mergeTimer: ReturnType<typeof setTimeout> | undefined;
  /**
   * Concurrent lookups of the same collections (every search of one account asks for the same two: the shared
   * one and the account's) share one statement, sent after all of them asked: the batcher's next statement,
   * never the one already in flight, so each sees every write committed before its search began. Nothing is
   * cached. Under load this takes a pooled connection and a round trip off most searches.
   */
  readonly collectionReads = new KeyedBatcher<undefined, readonly CollectionInfo[]>(async (key, items) => {
    const answer = await this.readCollections(key.split('\u0000'));
    return Array.from({ length: items.length }, () => answer);
  });

  constructor(
    private readonly pool: pg.Pool, private readonly own: boolean, readonly ranking: RankingParams, private readonly writeSlice: number,
    private readonly analyser: DocumentAnalyser = inlineAnalyser,
  ) {}

  private open(): void {
    if (this.closed) throw new Error('the search index is closed');
  }

  // ------------------------------------------------------------ SearchStorage

  collections(names: readonly string[]): Promise<readonly CollectionInfo[]> {
    // A name holding U+0000 (which PostgreSQL text cannot hold, and which joins the key) goes alone.
    if (names.some((n) => n.includes('\u0000'))) return this.readCollections(names);
    return this.collectionReads.submit(names.join('\u0000'), undefined);
  }

  /** One statement for one lookup (what collections() did before lookups were shared). */
  async readCollections(names: readonly string[]): Promise<readonly CollectionInfo[]> {
    // Named: run on every search, so each pooled connection parses and plans it once.
    const { rows } = await this.pool.query<{ id: number; name: string; documents: number | string; title_tokens: number | string; text_tokens: number | string; last_updated: number | string | null; analysers: [string, number][] | null }>({
      name: 'scour_search_collections',
      text: `SELECT c.id, c.name, c.documents, c.title_tokens, c.text_tokens, c.last_updated,
              (SELECT json_agg(json_build_array(a.analyser, a.documents)) FROM search_collection_analysers a WHERE a.cid = c.id) AS analysers
       FROM search_collections c WHERE c.name = ANY($1::text[])`,
      values: [names as string[]],
    });
    const byName = new Map(rows.map((r) => [r.name, r]));
    const out: CollectionInfo[] = [];
    for (const n of names) {
      const r = byName.get(n);
      if (r === undefined) continue;
      out.push({
        id: r.id, name: r.name, documents: num(r.documents), titleTokens: num(r.title_tokens), textTokens: num(r.text_tokens),
        lastUpdated: numOrNull(r.last_updated), analysers: new Map((r.analysers ?? []).map(([a, d]) => [a, Number(d)])),
      });
    }
    return out;
  }

  async postings(forms: readonly string[], collectionIds: readonly number[]): Promise<Map<string, PostingList>> {
    const out = new Map<string, PostingList>();
    if (forms.length === 0 || collectionIds.length === 0) return out;
    const { rows } = await this.pool.query<[string, number, Buffer]>({
      text: `SELECT term, count, data FROM search_postings WHERE term = ANY($1::text[]) AND cid = ANY($2::int[]) ORDER BY term, cid, first_doc`,
      values: [forms, collectionIds],
      rowMode: 'array',
    });
    const grouped = new Map<string, { data: Uint8Array[]; count: number }>();
    for (const [term, count, data] of rows) {
      let g = grouped.get(term);
      if (g === undefined) grouped.set(term, (g = { data: [], count: 0 }));
      g.data.push(data);
      g.count += count;
    }
    for (const [term, g] of grouped) out.set(term, new PostingList(g.data, g.count));
    return out;
  }

  async filter(docs: readonly number[], f: DocumentFilter): Promise<Map<number, DocumentFacts>> {
    const where: string[] = [];
    const args: unknown[] = [docs];
    if (f.country !== undefined) { args.push(f.country); where.push(`country = $${args.length}`); }
    if (f.language !== undefined) { args.push(f.language); where.push(`language = $${args.length}`); }
    if (f.publishedAfter !== undefined) { args.push(f.publishedAfter); where.push(`published_at >= $${args.length}`); }
    if (f.safe === 'moderate') where.push('safe IS DISTINCT FROM false');
    if (f.safe === 'strict') where.push('safe = true');
    if (f.news) where.push(`type IN ('news', 'article') AND published_at IS NOT NULL`);
    const { rows } = await this.pool.query<[number | string, number | string | null, string]>({
      text: `SELECT id, published_at, domain FROM search_documents WHERE id = ANY($1::bigint[])${where.map((w) => ` AND ${w}`).join('')}`,
      values: args,
      rowMode: 'array',
    });
    const out = new Map<number, DocumentFacts>();
    for (const [id, publishedAt, domain] of rows) out.set(num(id), { publishedAt: numOrNull(publishedAt), domain });
    return out;
  }

  async explicit(collectionIds: readonly number[]): Promise<ReadonlySet<number>> {
    const { rows } = await this.pool.query<[number | string]>({
      text: 'SELECT id FROM search_documents WHERE safe = false AND cid = ANY($1::int[])',
      values: [collectionIds],
      rowMode: 'array',
    });
    return new Set(rows.map(([id]) => num(id)));
  }

  async documents(docs: readonly number[]): Promise<Map<number, StoredDocument & { readonly analyser: string }>> {
    const out = new Map<number, StoredDocument & { analyser: string }>();
    if (docs.length === 0) return out;
    const { rows } = await this.pool.query<DocRow>(
      `SELECT ${DOC_COLUMNS} FROM search_documents d JOIN search_collections c ON c.id = d.cid WHERE d.id = ANY($1::bigint[])`,
      [docs],
    );
    for (const r of rows) out.set(num(r.id), toStored(r));
    return out;
  }

  // ------------------------------------------------------------ SearchIndex

  async search(query: IndexQuery): Promise<IndexSearchResult> {
    this.open();
    return runSearch(this, query, this.ranking);
  }

  private async transaction<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const r = await fn(client);
      await client.query('COMMIT');
      return r;
    } catch (e) {
      await client.query('ROLLBACK').catch((re: Error) => {
        broken = re;
      });
      throw e;
    } finally {
      client.release(broken);
    }
  }

  /** The collection's id (created when missing), with its writers' lock held until the transaction ends. */
  private async lockCollection(c: pg.PoolClient, name: string, create: boolean): Promise<number | undefined> {
    if (create) await c.query('INSERT INTO search_collections (name) VALUES ($1) ON CONFLICT (name) DO NOTHING', [name]);
    const { rows } = await c.query<{ id: number }>('SELECT id FROM search_collections WHERE name = $1', [name]);
    const id = rows[0]?.id;
    if (id !== undefined) await c.query('SELECT pg_advisory_xact_lock($1, $2)', [WRITE_LOCK, id]);
    return id;
  }

  /** Takes documents out: their rows, their block entries, their statistics. */
  private async forget(c: pg.PoolClient, cid: number, old: readonly OldDoc[], now: number, delta: { documents: number; titleTokens: number; textTokens: number; analysers: Map<string, number> }): Promise<void> {
    if (old.length === 0) return;
    const ids = old.map((o) => num(o.id));
    await c.query('DELETE FROM search_documents WHERE id = ANY($1::bigint[])', [ids]);
    const terms: string[] = [];
    const docs: number[] = [];
    for (const o of old) {
      for (const t of o.terms) {
        terms.push(t);
        docs.push(num(o.id));
      }
      delta.documents--;
      delta.titleTokens -= o.title_length;
      delta.textTokens -= o.text_length;
      delta.analysers.set(o.analyser, (delta.analysers.get(o.analyser) ?? 0) - 1);
    }
    const { rows } = await c.query<{ id: number | string; data: Buffer }>(
      `SELECT DISTINCT b.id, b.data FROM unnest($1::text[], $2::bigint[]) AS x(term, doc)
       CROSS JOIN LATERAL (SELECT id, data FROM search_postings p
                           WHERE p.term = x.term AND p.cid = $3 AND p.first_doc <= x.doc
                           ORDER BY p.first_doc DESC LIMIT 1) b`,
      [terms, docs, cid],
    );
    const blocks = new Map<number, Uint8Array>();
    for (const r of rows) blocks.set(num(r.id), r.data);
    const { updates, deletes } = planRemovals(blocks, new Set(ids));
    if (updates.length > 0) {
      await c.query(
        `UPDATE search_postings p SET first_doc = u.first_doc, count = u.count, data = u.data
         FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::bytea[]) AS u(id, first_doc, count, data) WHERE p.id = u.id`,
        [updates.map((u) => u[0]), updates.map((u) => u[1]), updates.map((u) => u[2]), updates.map((u) => u[3])],
      );
    }
    if (deletes.length > 0) await c.query('DELETE FROM search_postings WHERE id = ANY($1::bigint[])', [deletes]);
    void now;
  }

  private async applyDelta(c: pg.PoolClient, cid: number, d: { documents: number; titleTokens: number; textTokens: number; analysers: Map<string, number> }, now: number): Promise<void> {
    await c.query(
      `UPDATE search_collections SET documents = documents + $1, title_tokens = title_tokens + $2, text_tokens = text_tokens + $3, last_updated = $4 WHERE id = $5`,
      [d.documents, d.titleTokens, d.textTokens, now, cid],
    );
    const changed = [...d.analysers].filter(([, n]) => n !== 0);
    if (changed.length > 0) {
      await c.query(
        `INSERT INTO search_collection_analysers (cid, analyser, documents) SELECT $1, a, n FROM unnest($2::text[], $3::bigint[]) AS u(a, n)
         ON CONFLICT (cid, analyser) DO UPDATE SET documents = search_collection_analysers.documents + excluded.documents`,
        [cid, changed.map(([a]) => a), changed.map(([, n]) => n)],
      );
      await c.query('DELETE FROM search_collection_analysers WHERE cid = $1 AND documents <= 0', [cid]);
    }
  }

  async upsert(collection: string, documents: readonly IndexDocument[], now: number): Promise<UpsertResult> {
    this.open();
    checkCollection(collection);
    const docs = latestByUrl(documents);
    if (docs.length === 0) return { indexed: 0, updated: 0 };
    this.writing++;
    clearTimeout(this.mergeTimer);
    try {
      return await this.write(collection, docs, now);
    } finally {
      this.writing--;
      this.mergeLater();
    }
  }

  private async write(collection: string, docs: readonly IndexDocument[], now: number): Promise<UpsertResult> {
    // Analysis starts now (in the pool's workers, when there is one) and goes on while the transaction begins and writes.
    const parts = this.analyser.analyse(docs)[Symbol.asyncIterator]();
    let next = parts.next();
    next.catch(() => undefined);
    try {
      return await this.transaction(async (c) => {
        const cid = (await this.lockCollection(c, collection, true))!;
        const delta = { documents: 0, titleTokens: 0, textTokens: 0, analysers: new Map<string, number>() };
        const { rows: old } = await c.query<OldDoc & { url: string }>(
          'SELECT id, url, analyser, title_length, text_length, terms FROM search_documents WHERE cid = $1 AND url = ANY($2::text[])',
          [cid, docs.map((d) => clean(d.url))],
        );
        await this.forget(c, cid, old, now, delta);
        // One transaction, written in slices so each step is short work for this process's event loop: the
        // documents a slice at a time as their analysis comes in, then the postings a slice of terms at a time
        // (each block written once a call).
        const written: { id: number; titleLength: number; textLength: number; postings: PreparedDocument['postings'] }[] = [];
        let count = 0;
        for (let r = await next; r.done !== true; r = await next) {
          next = parts.next();
          next.catch(() => undefined);
          const prepared = r.value;
          for (let i = 0; i < prepared.length; i += this.writeSlice) {
            if (count > 0) await yieldToLoop();
            const slice = prepared.slice(i, i + this.writeSlice);
            const ids = await this.insertDocuments(c, cid, slice, now);
            count += slice.length;
            slice.forEach((d, k) => {
              written.push({ id: ids[k]!, titleLength: d.titleLength, textLength: d.textLength, postings: d.postings });
              delta.documents++;
              delta.titleTokens += d.titleLength;
              delta.textTokens += d.textLength;
              delta.analysers.set(d.analyser, (delta.analysers.get(d.analyser) ?? 0) + 1);
            });
          }
        }
        if (count >= SEGMENTS_FROM) {
          await yieldToLoop();
          // Segments: a block of its own per term (inserts only), in term order, a slice of blocks per statement.
          const blocks = segmentsOf(written, (t) => this.merges.note(cid, t));
          const slice = this.writeSlice * 20;
          for (let i = 0; i < blocks.length; i += slice) {
            await yieldToLoop();
            await this.insertBlocks(c, cid, blocks.slice(i, i + slice));
          }
        } else {
          const entries = [...entriesByTerm(written)];
          const termSlice = this.writeSlice * 10;
          for (let i = 0; i < entries.length; i += termSlice) {
            await yieldToLoop();
            await this.appendEntries(c, cid, new Map(entries.slice(i, i + termSlice)));
          }
        }
        await this.applyDelta(c, cid, delta, now);
        return { indexed: count - old.length, updated: old.length };
      });
    } finally {
      // A transaction that failed leaves the rest of the analysis to finish unobserved.
      void parts.return?.(undefined)?.catch(() => undefined);
    }
  }

  private async insertBlocks(c: pg.PoolClient, cid: number, blocks: readonly (readonly [string, number, number, Uint8Array])[]): Promise<void> {
    if (blocks.length === 0) return;
    await c.query(
      `INSERT INTO search_postings (term, cid, first_doc, count, data)
       SELECT term, $1, first_doc, count, data FROM unnest($2::text[], $3::bigint[], $4::int[], $5::bytea[]) AS u(term, first_doc, count, data)`,
      [cid, blocks.map((b) => b[0]), blocks.map((b) => b[1]), blocks.map((b) => b[2]), blocks.map((b) => b[3])],
    );
  }

  /** Starts the background merge once MERGE_AFTER_MS have passed without an upsert here, if terms are due. */
  private mergeLater(): void {
    clearTimeout(this.mergeTimer);
    if (this.closed || this.merges.pending === 0) return;
    this.mergeTimer = setTimeout(() => {
      this.mergeTimer = undefined;
      this.mergeNow();
    }, MERGE_AFTER_MS);
    this.mergeTimer.unref();
  }

  private mergeNow(): void {
    if (this.merging !== undefined || this.closed || this.writing > 0 || this.merges.pending === 0) return;
    this.merging = (async () => {
      try {
        while (!this.closed && this.writing === 0 && this.merges.pending > 0) {
          await yieldToLoop();
          await this.mergeStep(this.merges.take(MERGE_TERMS));
        }
      } catch {
        // A merge that fails leaves its terms' blocks as they were: correct, only less compact.
      } finally {
        this.merging = undefined;
      }
    })();
  }

  /**
   * Rewrites the given terms' runs of small blocks into full blocks, in one
   * transaction under the collection's write lock (a writer of the collection
   * waits for it, and it for them). Readers see the blocks before or after
   * (MVCC), the same entries either way.
   */
  private async mergeStep(terms: readonly [number, string][]): Promise<void> {
    const byCollection = new Map<number, string[]>();
    for (const [cid, term] of terms) {
      const list = byCollection.get(cid);
      if (list === undefined) byCollection.set(cid, [term]);
      else list.push(term);
    }
    for (const [cid, list] of byCollection) {
      await this.transaction(async (c) => {
        await c.query('SELECT pg_advisory_xact_lock($1, $2)', [WRITE_LOCK, cid]);
        const { rows } = await c.query<{ id: number | string; term: string; count: number; data: Buffer }>(
          'SELECT id, term, count, data FROM search_postings WHERE cid = $1 AND term = ANY($2::text[]) ORDER BY term, first_doc',
          [cid, list],
        );
        const deletes: number[] = [];
        const updates: [number, number, number, Uint8Array][] = [];
        const inserts: [string, number, number, Uint8Array][] = [];
        for (let i = 0; i < rows.length;) {
          let j = i;
          while (j < rows.length && rows[j]!.term === rows[i]!.term) j++;
          const m = planMerge(rows.slice(i, j).map((r) => ({ id: num(r.id), count: r.count, data: r.data })));
          deletes.push(...m.deletes);
          updates.push(...m.updates);
          for (const [first, n, data] of m.inserts) inserts.push([rows[i]!.term, first, n, data]);
          i = j;
        }
        if (deletes.length > 0) await c.query('DELETE FROM search_postings WHERE id = ANY($1::bigint[])', [deletes]);
        if (updates.length > 0) {
          await c.query(
            `UPDATE search_postings p SET first_doc = u.first_doc, count = u.count, data = u.data
             FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::bytea[]) AS u(id, first_doc, count, data) WHERE p.id = u.id`,
            [updates.map((u) => u[0]), updates.map((u) => u[1]), updates.map((u) => u[2]), updates.map((u) => u[3])],
          );
        }
        await this.insertBlocks(c, cid, inserts);
      });
    }
  }

  /** New documents' entries to each term's last block while it has room, then to new blocks. */
  private async appendEntries(c: pg.PoolClient, cid: number, entries: Map<string, Entry[]>): Promise<void> {
    const { rows: last } = await c.query<[string, number | string, number]>({
      text: `SELECT t.term, b.id, b.count FROM unnest($1::text[]) AS t(term)
             CROSS JOIN LATERAL (SELECT id, count FROM search_postings p WHERE p.term = t.term AND p.cid = $2
                                 ORDER BY p.first_doc DESC LIMIT 1) b`,
      values: [[...entries.keys()], cid],
      rowMode: 'array',
    });
    const { appends, inserts } = planAppends(entries, new Map(last.map(([t, id, n]) => [t, [num(id), n] as const])));
    if (appends.length > 0) {
      await c.query(
        `UPDATE search_postings p SET count = p.count + u.n, data = p.data || u.data
         FROM unnest($1::bigint[], $2::int[], $3::bytea[]) AS u(id, n, data) WHERE p.id = u.id`,
        [appends.map((a) => a[0]), appends.map((a) => a[1]), appends.map((a) => a[2])],
      );
    }
    if (inserts.length > 0) {
      await c.query(
        `INSERT INTO search_postings (term, cid, first_doc, count, data)
         SELECT term, $1, first_doc, count, data FROM unnest($2::text[], $3::bigint[], $4::int[], $5::bytea[]) AS u(term, first_doc, count, data)`,
        [cid, inserts.map((i) => i[0]), inserts.map((i) => i[1]), inserts.map((i) => i[2]), inserts.map((i) => i[3])],
      );
    }
  }

  /** Inserts the documents in order (ids grow with it) and returns their ids. */
  private async insertDocuments(c: pg.PoolClient, cid: number, docs: readonly PreparedDocument[], now: number): Promise<number[]> {
    const col = <T>(f: (d: PreparedDocument) => T): T[] => docs.map(f);
    const { rows } = await c.query<{ id: number | string; url: string }>(
      `INSERT INTO search_documents (cid, url, published_at, language, analyser, country, type, safe, domain, indexed_at,
         title_length, text_length, author, site_name, doi, title, terms, text)
       SELECT $1, u.url, u.published_at, u.language, u.analyser, u.country, u.type, u.safe, u.domain, $2,
              u.title_length, u.text_length, u.author, u.site_name, u.doi, u.title, string_to_array(u.terms, ' '), u.text
       FROM unnest($3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::boolean[], $10::text[],
                   $11::int[], $12::int[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[])
            WITH ORDINALITY AS u(url, published_at, language, analyser, country, type, safe, domain,
                                 title_length, text_length, author, site_name, doi, title, terms, text, n)
       ORDER BY u.n
       RETURNING id, url`,
      [
        cid, now, col((d) => d.url), col((d) => d.publishedAt), col((d) => d.language), col((d) => d.analyser), col((d) => d.country),
        col((d) => d.type), col((d) => d.safe), col((d) => d.domain), col((d) => d.titleLength), col((d) => d.textLength),
        col((d) => d.author), col((d) => d.siteName), col((d) => d.doi), col((d) => d.title), col((d) => d.postings.terms.join(' ')),
        col((d) => d.text),
      ],
    );
    const byUrl = new Map(rows.map((r) => [r.url, num(r.id)]));
    return docs.map((d) => byUrl.get(d.url)!);
  }

  async remove(collection: string, urls: readonly string[], now: number): Promise<number> {
    this.open();
    checkCollection(collection);
    // A URL holding U+0000 is none stored (PostgreSQL text cannot hold it, and would refuse the statement).
    const unique = [...new Set(urls)].filter((u) => !u.includes('\u0000'));
    if (unique.length === 0) return 0;
    return this.transaction(async (c) => {
      const cid = await this.lockCollection(c, collection, false);
      if (cid === undefined) return 0;
      const { rows: old } = await c.query<OldDoc>(
        'SELECT id, analyser, title_length, text_length, terms FROM search_documents WHERE cid = $1 AND url = ANY($2::text[])',
        [cid, unique],
      );
      if (old.length === 0) return 0;
      const delta = { documents: 0, titleTokens: 0, textTokens: 0, analysers: new Map<string, number>() };
      await this.forget(c, cid, old, now, delta);
      await this.applyDelta(c, cid, delta, now);
      return old.length;
    });
  }

  async get(collections: readonly string[], urls: readonly string[]): Promise<readonly StoredDocument[]> {
    this.open();
    urls = urls.filter((u) => !u.includes('\u0000'));
    if (collections.length === 0 || urls.length === 0) return [];
    const { rows } = await this.pool.query<DocRow>(
      `SELECT ${DOC_COLUMNS} FROM search_documents d JOIN search_collections c ON c.id = d.cid
       WHERE c.name = ANY($1::text[]) AND d.url = ANY($2::text[]) ORDER BY d.id`,
      [[...new Set(collections)], [...new Set(urls)]],
    );
    return rows.map((r) => {
      const { analyser: _a, ...d } = toStored(r);
      return d;
    });
  }

  async stats(): Promise<IndexStats> {
    this.open();
    const { rows } = await this.pool.query<{ name: string; documents: number | string; last_updated: number | string | null }>(
      'SELECT name, documents, last_updated FROM search_collections ORDER BY name COLLATE "C"',
    );
    const collections: CollectionStats[] = rows.map((r) => ({ collection: r.name, documents: num(r.documents), lastUpdated: numOrNull(r.last_updated) }));
    const { rows: size } = await this.pool.query<{ bytes: number | string | null }>(
      `SELECT sum(pg_total_relation_size(c.oid)) AS bytes FROM pg_class c
       WHERE c.relname IN ('search_collections', 'search_collection_analysers', 'search_documents', 'search_postings')
         AND c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'`,
    );
    const b = size[0]?.bytes;
    return { collections, bytes: b === null || b === undefined ? null : num(b) };
  }

  /**
   * Starts what a first import would otherwise start (the analysis threads)
   * and resolves once they are up. Optional: an import without it starts them itself.
   */
  async warm(): Promise<void> {
    await this.analyser.ready?.();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.mergeTimer);
    await this.merging;
    if (this.own) await this.pool.end();
  }
}
