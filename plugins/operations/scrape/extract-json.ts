/**
 * extract_json's two stages of POST /v1/scrape (issue 27): before anything
 * is held or fetched, a server without a model answers 503
 * MODEL_UNAVAILABLE; after the page is read, the model fills the caller's
 * schema from its main content (the JsonExtractor, core/json-extraction.ts,
 * does the asking and the checking). A model that fails fails the request
 * (nothing is charged); a page with no main content gets
 * `extracted_json: null` and a NO_CONTENT warning, and no model is asked.
 */
import { Effect } from 'effect';
import { ModelOutputInvalid, ModelTimeout, ModelUnavailable, type ApiFailure } from '../../../core/errors.js';
import type { ExtractionFailure, PageSource } from '../../../core/extraction.js';
import type { JsonExtractionWarning, JsonExtractor } from '../../../core/json-extraction.js';
import { HTML_MEDIA_TYPES, mediaType, type PageReader } from '../../../core/page.js';
import type { ScrapeInput } from './request.js';

export function extractJsonStages(pages: PageReader, extractor: JsonExtractor | undefined) {
  const needsModel = {
    name: 'model',
    run: (ctx: { readonly input: ScrapeInput }): Effect.Effect<{ readonly modelReady: boolean }, ModelUnavailable> => {
      if (ctx.input.extract_json === undefined) return Effect.succeed({ modelReady: false });
      if (extractor === undefined) {
        return Effect.fail(new ModelUnavailable({
          message: 'extract_json needs a model, and this server has none configured',
          details: 'the operator sets LLM_BASE_URL and LLM_MODEL (an OpenAI-compatible chat endpoint)',
        }));
      }
      return Effect.succeed({ modelReady: true });
    },
  };

  type Out = { extractedJson?: Readonly<Record<string, unknown>> | null; extractedJsonWarnings?: readonly JsonExtractionWarning[] };
  const extractJson = {
    name: 'extract_json',
    run: (ctx: {
      readonly input: ScrapeInput; readonly builtins: Record<string, unknown>; readonly source: PageSource; readonly extractAlone?: boolean;
    }): Effect.Effect<Out, ApiFailure | ExtractionFailure> => {
      const x = ctx.input.extract_json;
      if (x === undefined || extractor === undefined) return Effect.succeed({});
      const media = mediaType(ctx.source.contentType);
      // The main content: asked for already, or read now (an HTML page); a text page's text is its main content.
      const content: Effect.Effect<string, ExtractionFailure> = typeof ctx.builtins.main_content === 'string'
        ? Effect.succeed(ctx.builtins.main_content)
        : media === '' || HTML_MEDIA_TYPES.includes(media)
          ? Effect.map(pages.extractMore(ctx, ['main_content']), (more) => (typeof more.values.main_content === 'string' ? more.values.main_content : ''))
          : Effect.succeed(typeof ctx.builtins.text_content === 'string' ? ctx.builtins.text_content : '');
      // The model's own time: the request's timeout, from now (the page is read).
      const timeoutSeconds = ctx.input.timeout ?? 30;
      return Effect.flatMap(content, (text): Effect.Effect<Out, ApiFailure> => {
        if (text.trim() === '') {
          return Effect.succeed({
            extractedJson: null,
            extractedJsonWarnings: [{ code: 'NO_CONTENT', path: '', message: 'the page has no main content to extract from: no model was asked, and extract_json was not charged' }],
          });
        }
        return Effect.flatMap(
          Effect.promise((signal) => extractor.extract({
            schema: x.schema, prompt: x.prompt, content: text, url: ctx.source.finalUrl || ctx.input.url,
            deadline: Date.now() + timeoutSeconds * 1000, signal,
          })),
          (o): Effect.Effect<Out, ApiFailure> => {
            if (o.ok) return Effect.succeed({ extractedJson: o.value, extractedJsonWarnings: o.warnings });
            switch (o.kind) {
              case 'invalid':
                return Effect.fail(new ModelOutputInvalid({
                  message: `extract_json: ${o.message}`,
                  details: (o.problems ?? []).map((p) => `${p.field || '(the answer)'}: ${p.message}`).join('; ').slice(0, 1000),
                  problems: o.problems ?? [],
                }));
              case 'timeout':
                return Effect.fail(new ModelTimeout({ message: `extract_json: ${o.message}`, timeoutSeconds }));
              default:
                return Effect.fail(new ModelUnavailable({ message: 'extract_json: the model could not be asked', details: o.message }));
            }
          },
        );
      });
    },
  };

  return { needsModel, extractJson };
}
