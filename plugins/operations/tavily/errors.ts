/**
 * Failures in Tavily's shape: `{"detail": {"error": "<message>"}}`, with the
 * status Tavily uses for the same failure. The clients read nothing else:
 * @langchain/tavily throws `Error <status>: <detail.error>` (its tools
 * answer `{error}`), @tavily/core throws `Error(detail.error)`.
 *
 * Statuses: 400 bad request, 401 missing or invalid key, 429 too many
 * requests and 432 "exceeds your plan's usage limit" (Scour's 402
 * NO_CREDITS) are Tavily's; the others keep Scour's status (403 a plan
 * feature or a blocked target, 413, 415, 5xx). The headers stay
 * (Retry-After, x-ratelimit-*), and x-request-id names the request.
 */
import { type ApiFailure, BadRequest, type FieldIssue, listedIssues } from '../../../core/errors.js';
import type { JsonSchema } from '../../../core/schema.js';

/** Tavily's status for "this request exceeds your plan's set usage limit". */
export const PLAN_LIMIT_STATUS = 432;

export const TAVILY_ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  description: "Tavily's error body; x-request-id names the request.",
  required: ['detail'],
  properties: { detail: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } } },
};

function issuesText(failure: ApiFailure): string {
  const issues = (failure.fields().validation_errors as readonly FieldIssue[] | undefined) ?? [];
  return issues.map((i) => `${i.field} ${i.message}`).join('; ');
}

export function tavilyError(failure: ApiFailure): { status: number; body: { detail: { error: string } } } {
  let status = failure.status;
  let error = failure.message;
  if (status === 400) {
    const listed = issuesText(failure);
    if (listed !== '') error = `${failure.message}: ${listed}`;
  } else if (status === 402) {
    status = PLAN_LIMIT_STATUS;
    error = `This request exceeds your plan's set usage limit: ${failure.message}`;
  }
  return { status, body: { detail: { error } } };
}

/** The 400 for problems found in translation (the native pipeline answers it after auth and rate limiting). */
export function invalidRequest(issues: readonly FieldIssue[]): BadRequest {
  return new BadRequest({
    message: issues.length === 1 ? 'Invalid request' : `Invalid request: ${issues.length} problems`,
    validationErrors: listedIssues(issues),
  });
}
