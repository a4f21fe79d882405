/**
 * Research, wired from settings: the operation over the same search
 * providers as /v1/search, the local index's tokenizer for ranking
 * passages, the blob store for exports (sources are read through the
 * host's page pipeline), and the built-in analysers and exporters.
 */
import type { PluginBase } from '../core/plugin.js';
import type { BlobStore } from '../core/ports.js';
import type { SearchIndex } from '../core/search.js';
import type { PauseBook } from '../core/search-merge.js';
import type { IndexTokenizer } from '../core/research.js';
import { analyserKey, termOf, tokenize } from '../adapters/search-index/analysis.js';
import { createResearchOperation } from '../plugins/operations/research/index.js';
import { builtinAnalysers } from '../plugins/analysers/index.js';
import { builtinExporters } from '../plugins/exporters/index.js';
import { createLlmRewriter } from '../plugins/research-rewriter/index.js';
import { egressPolicy } from './scrape.js';
import { enabledSearchProviders, type Settings } from './env.js';
import { VERSION } from './version.js';

/** Terms as the local index makes them: its tokenizer, stop words and stemmer for the language. */
export const indexTokenizer: IndexTokenizer = {
  terms(text: string, language: string | null): string[] {
    const key = analyserKey(language);
    const out: string[] = [];
    tokenize(text, (token, _p, _s, _e, cjk) => {
      const t = termOf(token, key, cjk);
      if (t !== null) out.push(t);
    });
    return out;
  },
};

export function researchPlugins(settings: Settings, index: SearchIndex, blobs: BlobStore, pauses?: PauseBook): PluginBase[] {
  return [
    ...builtinAnalysers,
    ...builtinExporters,
    createResearchOperation({
      providers: enabledSearchProviders(settings),
      providerTimeoutMs: settings.searchProviderTimeoutMs,
      ...(pauses === undefined ? {} : { pauses }),
      index,
      tokenizer: indexTokenizer,
      egress: egressPolicy(settings.allowPrivateTargets),
      blobs,
      exportTtlMs: settings.exportTtlSeconds * 1000,
      publicUrl: settings.publicUrl,
      version: VERSION,
      ...(settings.llm !== undefined ? { rewriter: createLlmRewriter(settings.llm) } : {}),
    }),
  ];
}
