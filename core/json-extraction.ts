/**
 * extract_json (issue 27): a model fills a caller's JSON Schema from a
 * page's main content, and the answer is checked before it is delivered.
 * Two contracts, both pure types:
 * - CallerSchemas: a caller's JSON Schema judged and compiled (the
 *   composition root gives the adapter: adapters/validation/caller-schema.ts,
 *   Ajv, the validator that checks requests);
 * - JsonExtractor: the model exchange with its checks and its one retry
 *   (plugins/json-extractor), present only when a model is configured
 *   (LLM_BASE_URL); the scrape operation runs it on the page it read.
 */
import type { FieldIssue } from './errors.js';

/** One value of an answer the schema marks `"x-quote": true`: it must be found in the page. */
export interface QuotedValue {
  /** A JSON pointer into the answer (`/authors/0/name`). */
  readonly path: string;
  readonly value: string;
}

/** An answer judged against its schema. */
export interface AnswerCheck {
  /** Schema violations (`field` is a JSON pointer into the answer, '' for the root). Empty: the answer validates. */
  readonly errors: readonly FieldIssue[];
  /** The strings the schema marks as quotes (collected whether or not the answer validates). */
  readonly quoted: readonly QuotedValue[];
}

/** A caller's schema, compiled: judges answers. */
export type AnswerValidator = (answer: unknown) => AnswerCheck;

export interface CallerSchemas {
  /**
   * Judge a caller's schema and compile it: its problems (each a message
   * naming what is wrong), or its validator. Synchronous, no I/O; refuses
   * what it will not run (remote references, regular expressions) and
   * schemas over its size and depth limits.
   */
  compile(schema: unknown): { readonly ok: true; readonly validate: AnswerValidator } | { readonly ok: false; readonly problems: readonly string[] };
}

/** What extract_json asks. */
export interface JsonExtractionRequest {
  readonly schema: Readonly<Record<string, unknown>>;
  readonly prompt: string | undefined;
  /** The page's main content (the extractor bounds what it sends). */
  readonly content: string;
  readonly url: string;
  /** When both model calls together must be done (epoch ms). */
  readonly deadline: number;
  /** The request's own cancellation (the client gone). */
  readonly signal?: AbortSignal | undefined;
}

/** A warning about one value of the answer. */
export interface JsonExtractionWarning {
  readonly code: string;
  /** A JSON pointer into extracted_json. */
  readonly path: string;
  readonly message: string;
}

export type JsonExtractionOutcome =
  | {
    readonly ok: true;
    readonly value: Readonly<Record<string, unknown>>;
    readonly warnings: readonly JsonExtractionWarning[];
    /** Model calls made (1, or 2 after a retry). */
    readonly attempts: number;
  }
  | {
    readonly ok: false;
    /** invalid: the answers were not JSON or did not validate (twice); timeout: the deadline passed; unavailable: the model server failed. */
    readonly kind: 'invalid' | 'timeout' | 'unavailable' | 'aborted';
    readonly message: string;
    /** The last answer's problems, when `invalid`. */
    readonly problems?: readonly FieldIssue[];
  };

export interface JsonExtractor {
  /** Problems of a caller's schema (each a message), or none. */
  schemaProblems(schema: unknown): readonly string[];
  /** Never rejects. */
  extract(request: JsonExtractionRequest): Promise<JsonExtractionOutcome>;
}
