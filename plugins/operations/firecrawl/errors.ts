/**
 * Firecrawl's error shape over Scour's failures. Firecrawl answers
 * `{success: false, error: "...", details?}` with the HTTP status of the
 * failure; its clients read `error`, `details` and the status. A wrapped
 * failure keeps Scour's status, code, fields (validation_errors,
 * retry_after, ...) and headers (Retry-After, WWW-Authenticate), and adds
 * `success: false` and `details`, so the body is Firecrawl's shape and
 * Scour's at once (the app writes it as any failure: errors.md's body plus
 * these fields).
 */
import { BadRequest, type ApiFailure, type FieldIssue } from '../../../core/errors.js';

export class FirecrawlFailure implements ApiFailure {
  readonly _tag = 'FirecrawlFailure';
  readonly status: number;
  readonly code: string;
  readonly message: string;
  constructor(readonly inner: ApiFailure) {
    this.status = inner.status;
    this.code = inner.code;
    this.message = inner.message;
  }

  fields(): Record<string, unknown> {
    const own = this.inner.fields();
    // Firecrawl's 400 carries the problems in `details` (zod's issues: path and message); Scour's are validation_errors.
    const listed = own.validation_errors as readonly FieldIssue[] | undefined;
    const details = listed === undefined ? own.details : listed.map((i) => ({ path: i.field.split(/[.[\]]+/).filter((p) => p !== ''), message: i.message }));
    return { success: false, ...own, ...(details === undefined ? {} : { details }) };
  }

  headers(): Record<string, string> {
    return this.inner.headers?.() ?? {};
  }
}

/** A Scour failure in Firecrawl's shape (once: an already wrapped one stays as it is). */
export const firecrawlFailure = (e: ApiFailure): ApiFailure => (e instanceof FirecrawlFailure ? e : new FirecrawlFailure(e));

/** The 400 of a Firecrawl request that cannot be translated (its own field names). */
export function invalidRequest(issues: readonly FieldIssue[]): BadRequest {
  return new BadRequest({
    message: issues.length === 1 ? 'Bad Request: invalid request body' : `Bad Request: ${issues.length} problems in the request body`,
    validationErrors: issues,
  });
}
