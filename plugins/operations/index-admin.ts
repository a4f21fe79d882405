/**
 * The local index's admin API (with the rest of /admin/v1, only when
 * SCOUR_ADMIN_TOKEN is set): put documents into the shared collection or an
 * account's own, remove them, and see what each collection holds. A bad
 * document is reported by its index and field; the good ones are kept.
 */
import { Effect } from 'effect';
import type { RequestContext } from '../../core/context.js';
import { BadRequest, ServiceUnavailable, type ApiFailure } from '../../core/errors.js';
import { Pipeline } from '../../core/pipeline.js';
import type { Route } from '../../core/plugin.js';
import { SHARED_COLLECTION, type IndexDocument, type SearchIndex } from '../../core/search.js';
import { collectionProblem, toIndexDocument } from '../../core/index-documents.js';
import { defineOperation, schema, StrictObject, Type } from '../sdk/index.js';

export const MAX_DOCUMENTS_PER_CALL = 1000;

const Collection = Type.String({ minLength: 1, maxLength: 128, description: '"shared" (every account searches it) or an account id (that account only).' });
export const IndexDocumentsRequest = StrictObject({
  collection: Collection,
  documents: Type.Array(Type.Unknown({ description: 'url, title, text, published_date, language, country, type, author, site_name, doi, safe' }), { minItems: 1, maxItems: MAX_DOCUMENTS_PER_CALL }),
});
const Rejected = StrictObject({ index: Type.Integer(), field: Type.String(), message: Type.String() });
export const IndexDocumentsResponse = StrictObject({
  collection: Type.String(),
  indexed: Type.Integer({ description: 'Documents new to the collection.' }),
  updated: Type.Integer({ description: 'Documents that replaced one with the same URL.' }),
  rejected: Type.Array(Rejected),
  request_id: Type.Optional(Type.String()),
});
export const RemoveDocumentsRequest = StrictObject({
  collection: Collection,
  urls: Type.Array(Type.String({ minLength: 1, maxLength: 8192 }), { minItems: 1, maxItems: MAX_DOCUMENTS_PER_CALL }),
});
const RemoveDocumentsResponse = StrictObject({ collection: Type.String(), removed: Type.Integer(), request_id: Type.Optional(Type.String()) });
const StatsResponse = StrictObject({
  documents: Type.Integer(),
  bytes: Type.Union([Type.Integer(), Type.Null()], { description: 'Size of the index on disk, when the backend can tell.' }),
  collections: Type.Array(StrictObject({ collection: Type.String(), documents: Type.Integer(), last_updated: Type.Union([Type.String(), Type.Null()]) })),
  request_id: Type.Optional(Type.String()),
});

/** The validate stage's semantic check of both routes: the collection's form (whether its account exists is asked after). */
const collectionCheck = (i: { readonly collection?: string | undefined }): { field: string; message: string }[] => {
  if (i.collection === undefined) return [];
  const problem = collectionProblem(i.collection);
  return problem === undefined ? [] : [{ field: 'collection', message: problem }];
};

const indexDown = (e: unknown): ApiFailure =>
  new ServiceUnavailable({ message: `The search index is unavailable: ${e instanceof Error ? e.message : String(e)}`, retryAfter: 1 });

/** Check a batch: the documents to write (a URL given twice: the later one wins) and what was refused, by position. */
export function checkBatch(documents: readonly unknown[]): { accepted: IndexDocument[]; rejected: { index: number; field: string; message: string }[] } {
  const rejected: { index: number; field: string; message: string }[] = [];
  const byUrl = new Map<string, { index: number; document: IndexDocument }>();
  documents.forEach((raw, index) => {
    const r = toIndexDocument(raw);
    if (!r.ok) {
      for (const i of r.issues) rejected.push({ index, ...i });
      return;
    }
    const earlier = byUrl.get(r.document.url);
    if (earlier !== undefined) rejected.push({ index: earlier.index, field: 'url', message: `the same URL comes again at index ${index}; the later document was kept` });
    byUrl.set(r.document.url, { index, document: r.document });
  });
  rejected.sort((a, b) => a.index - b.index);
  return { accepted: [...byUrl.values()].sort((a, b) => a.index - b.index).map((v) => v.document), rejected };
}

export function createIndexAdminOperation(options: { readonly index: SearchIndex }) {
  return defineOperation({
    name: 'operation-index-admin',
    description: 'The local search index under /admin/v1/index (enabled by SCOUR_ADMIN_TOKEN).',
    routes(host) {
      const admin = host.stages.admin;
      if (admin === undefined) return [];
      const base = () => Pipeline.from<RequestContext>().then(admin);
      const tags = ['admin', 'search'];
      /** "shared", or an account that exists. */
      const collection = (c: string): Effect.Effect<string, ApiFailure> => {
        const problem = collectionProblem(c);
        if (problem !== undefined) return Effect.fail(BadRequest.of('collection', problem));
        if (c === SHARED_COLLECTION) return Effect.succeed(c);
        return Effect.catch(Effect.map(host.accounts.requireAccount(c), () => c), (e: ApiFailure): Effect.Effect<string, ApiFailure> =>
          Effect.fail(e.code === 'NOT_FOUND' ? BadRequest.of('collection', `no account ${c}: use "shared" or an account id`) : e));
      };
      const routes: Route<any, any>[] = [
        {
          method: 'POST', path: '/admin/v1/index/documents',
          summary: `Add or replace documents (by URL) in a collection, up to ${MAX_DOCUMENTS_PER_CALL} per call.`,
          description: 'Each document is checked on its own: the bad ones are listed in rejected (index in the request, field, message), the good ones are written (one transaction on PostgreSQL; on SQLite consecutive short transactions, so requests sharing the file never wait long).',
          tags, auth: 'admin', failures: [400, 401, 413, 503],
          request: schema(IndexDocumentsRequest), response: schema(IndexDocumentsResponse),
          handle: base().then(host.stages.validate(schema(IndexDocumentsRequest), collectionCheck)).handle((ctx) =>
            Effect.flatMap(collection(ctx.input.collection), (c) => {
              const { accepted, rejected } = checkBatch(ctx.input.documents);
              const write = accepted.length === 0
                ? Effect.succeed({ indexed: 0, updated: 0 })
                : Effect.tryPromise({ try: () => options.index.upsert(c, accepted, ctx.receivedAt), catch: indexDown });
              return Effect.map(write, (w) => ({ collection: c, indexed: w.indexed, updated: w.updated, rejected }));
            })),
        },
        {
          method: 'DELETE', path: '/admin/v1/index/documents', summary: 'Remove documents from a collection by URL.',
          tags, auth: 'admin', failures: [400, 401, 503],
          request: schema(RemoveDocumentsRequest), response: schema(RemoveDocumentsResponse),
          handle: base().then(host.stages.validate(schema(RemoveDocumentsRequest), collectionCheck)).handle((ctx) =>
            Effect.flatMap(collection(ctx.input.collection), (c) =>
              Effect.map(Effect.tryPromise({ try: () => options.index.remove(c, ctx.input.urls, ctx.receivedAt), catch: indexDown }), (removed) => ({ collection: c, removed })))),
        },
        {
          method: 'GET', path: '/admin/v1/index/stats', summary: 'Documents per collection, last update, and the size of the index on disk.',
          tags, auth: 'admin', failures: [401, 503], response: schema(StatsResponse),
          handle: base().handle(() =>
            Effect.map(Effect.tryPromise({ try: () => options.index.stats(), catch: indexDown }), (s) => ({
              documents: s.collections.reduce((n, c) => n + c.documents, 0),
              bytes: s.bytes,
              collections: s.collections.map((c) => ({
                collection: c.collection, documents: c.documents, last_updated: c.lastUpdated === null ? null : new Date(c.lastUpdated).toISOString(),
              })),
            }))),
        },
      ];
      return routes;
    },
  });
}
