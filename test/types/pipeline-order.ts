/**
 * Type-level tests, checked by `npm run typecheck` (tsc fails if an expected
 * error is missing): a mis-ordered pipeline must not compile.
 */
import { Effect } from 'effect';
import type { RequestContext } from '../../core/context.js';
import { Pipeline } from '../../core/pipeline.js';
import type { BadRequest } from '../../core/errors.js';
import type { Stage } from '../../core/pipeline.js';
import type { AuthStage, BillStage, GateStage, QuotaStage, ReserveStage, ValidateStage, Validated } from '../../core/stages/index.js';

// Two stages of this test's own (an operation's fetch and extract, in the shape the page pipeline's stages have).
interface Fetched {
  readonly document: {
    readonly url: string;
    readonly finalUrl: string;
    readonly statusCode: number;
    readonly headers: Readonly<Record<string, string>>;
    readonly body: string;
    readonly loadTimeSeconds: number;
  };
}
interface Extracted { readonly extracted: Readonly<Record<string, unknown>> }
type FetchStage<Body> = Stage<RequestContext & Validated<Body>, Fetched, BadRequest>;
type ExtractStage = Stage<Fetched, Extracted>;

declare const auth: AuthStage;
declare const quota: QuotaStage;
declare const bill: BillStage;
declare const validate: ValidateStage<{ url: string }>;
declare const fetchStage: FetchStage<{ url: string }>;
declare const extract: ExtractStage;
declare const gate: GateStage<{ url: string }>;
declare const reserve: ReserveStage<{ url: string }>;

// The right order compiles, and the handler sees every field.
export const ok = Pipeline.from<RequestContext>().then(auth).then(quota).then(validate).then(gate).then(reserve).then(fetchStage).then(extract).then(bill)
  .handle((ctx) => Effect.succeed([ctx.account.id, ctx.rateLimit.limit, ctx.input.url, ctx.hold.credits, ctx.document.finalUrl, ctx.extracted, ctx.charge.creditsUsed]));

// @ts-expect-error quota needs the account that auth provides
export const quotaFirst = Pipeline.from<RequestContext>().then(quota);
// @ts-expect-error bill needs a credit hold (reserve) before it
export const billEarly = Pipeline.from<RequestContext>().then(auth).then(quota).then(validate).then(bill);
// @ts-expect-error reserve needs the quota decision (no holding credits for a request the rate limit refuses)
export const reserveBeforeQuota = Pipeline.from<RequestContext>().then(auth).then(validate).then(reserve);
// @ts-expect-error reserve prices the validated input
export const reserveUnvalidated = Pipeline.from<RequestContext>().then(auth).then(quota).then(reserve);
// @ts-expect-error gate needs the account's plan
export const gateAnonymous = Pipeline.from<RequestContext>().then(validate).then(gate);
// @ts-expect-error extract needs the fetched document
export const extractFirst = Pipeline.from<RequestContext>().then(auth).then(extract);
// @ts-expect-error the handler cannot read a field no stage added
export const missingField = Pipeline.from<RequestContext>().then(auth).handle((ctx) => Effect.succeed(ctx.charge));
// @ts-expect-error fetch needs the validated input (the URL to fetch)
export const fetchUnvalidated = Pipeline.from<RequestContext>().then(auth).then(quota).then(fetchStage);
// @ts-expect-error the handler cannot read a typed input without the validate stage
export const unvalidatedInput = Pipeline.from<RequestContext>().handle((ctx) => Effect.succeed(ctx.input));
