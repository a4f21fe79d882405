/**
 * Browser actions (issue 29, section 1): run in order on a loaded page,
 * before it is read. Each action is bounded by the time left to the
 * actions (the request's timeout less what reading the page needs); the
 * first that fails stops the rest, and the page is read as it stands.
 * Whatever the page requests meanwhile goes through the render's own
 * egress proxy, like every request of the render.
 *
 * An action waits for nothing it was not asked to: click and write act on
 * the element that matches now (a `wait` for its selector comes first when
 * it appears later), and after each action the page is given a short quiet
 * period of the network (at most ACTION_SETTLE_MS) so that what the action
 * started (a fetch, a navigation) lands before the next one.
 *
 * execute_javascript runs the script as the body of an async function in
 * the page's main world, through CDP (so the page's Content-Security-Policy
 * does not stop it, as it does not stop the page's own scripts). Its value
 * is serialised to JSON in the page by a separate call on the value's
 * handle, so no script can make the fetcher receive more than
 * MAX_SCRIPT_RESULT_BYTES; a script still running after SCRIPT_TIMEOUT_MS is
 * terminated (Runtime.terminateExecution), a synchronous endless loop too.
 */
import type { CDPSession, Page } from 'playwright';
import { abortable } from '../../../core/abort.js';
import type { ActionOutcome, BrowserAction, SelectorSpec, Shot } from '../../../core/page.js';
import type { NetworkTracker } from './settle.js';

/** An execute_javascript value larger than this as JSON (UTF-8 bytes) fails the action. */
export const MAX_SCRIPT_RESULT_BYTES = 64 * 1024;
/** One script's time, at most. */
export const SCRIPT_TIMEOUT_MS = 10_000;
/** Actionability (visible, stable, enabled) of a click or write's element, at most. */
const ACTION_ELEMENT_MS = 5_000;
/** After each action: wait for this long without a request in flight... */
const ACTION_QUIET_MS = 100;
/** ...but no longer than this. */
const ACTION_SETTLE_MS = 2_000;
/** An error message longer than this is cut. */
const MAX_ERROR_CHARS = 500;

export interface ActionContext {
  readonly page: Page;
  readonly cdp: CDPSession;
  readonly network: NetworkTracker;
  /** The render's signal (client gone, the request's deadline, shutdown): it stops everything. */
  readonly signal: AbortSignal;
  /** performance.now() by which the actions must be done. */
  readonly deadline: number;
  /** A screenshot of the page (the fetcher's own capture, its size bounds included). */
  readonly screenshot: (fullPage: boolean, remaining: () => number) => Promise<Shot>;
}

/** A failure of the action itself (reported), as opposed to the render's (thrown on). */
class ActionError extends Error {}

const errText = (e: unknown): string => {
  const text = ((e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '').replace(/^(page|locator|elementHandle|keyboard)\.\w+: /, '');
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS - 1)}…` : text;
};
const isTimeout = (e: unknown): boolean => e instanceof Error && e.name === 'TimeoutError';
const isInvalidSelector = (e: unknown): boolean => /is not a valid selector|Unexpected token|Failed to execute 'evaluate'|SyntaxError/i.test(errText(e));

const engineSelector = (s: SelectorSpec): string => `${s.kind}=${s.selector}`;
const seconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`;

/** Run `actions` in order; answer what each one run did (the first that fails is the last). Throws only when the render itself is over (its signal). */
export async function runActions(actions: readonly BrowserAction[], ctx: ActionContext): Promise<ActionOutcome[]> {
  const out: ActionOutcome[] = [];
  for (const [index, action] of actions.entries()) {
    const left = ctx.deadline - performance.now();
    if (left < 1) {
      out.push({ index, type: action.type, ok: false, error: 'no time left for this action within the request\'s timeout' });
      break;
    }
    try {
      const done = await run(action, ctx);
      out.push({ index, type: action.type, ok: true, ...done });
    } catch (e) {
      if (ctx.signal.aborted) throw e;
      if (ctx.page.isClosed()) throw e;
      out.push({ index, type: action.type, ok: false, error: e instanceof ActionError ? e.message : describe(action, e) });
      break;
    }
    await settle(ctx);
  }
  return out;
}

/** What a Playwright failure means for the action. */
function describe(action: BrowserAction, e: unknown): string {
  if (isTimeout(e)) return `timed out: ${errText(e)}`;
  if ('selector' in action && action.selector !== undefined && isInvalidSelector(e)) return `not a valid ${action.selector.kind === 'css' ? 'CSS selector' : 'XPath expression'}: ${errText(e)}`;
  return errText(e);
}

/** What an action started (a request, a navigation) is given a moment to land. */
async function settle(ctx: ActionContext): Promise<void> {
  const cap = Math.min(ACTION_SETTLE_MS, Math.max(0, ctx.deadline - performance.now()));
  if (cap <= 0) return;
  await ctx.network.quiet(ACTION_QUIET_MS, cap, ctx.signal);
  // A navigation the action started: its document in before the next action (or the read).
  await abortable(ctx.page.waitForLoadState('domcontentloaded', { timeout: Math.max(1, ctx.deadline - performance.now()) }), ctx.signal).catch((e: unknown) => {
    if (ctx.signal.aborted) throw e;
  });
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> => abortable(new Promise<void>((r) => setTimeout(r, ms)), signal);

async function element(ctx: ActionContext, selector: SelectorSpec) {
  const el = await abortable(ctx.page.$(engineSelector(selector)), ctx.signal);
  if (el === null) throw new ActionError(`no element matches "${selector.selector}" (a wait for it first, if it comes later)`);
  return el;
}

async function run(action: BrowserAction, ctx: ActionContext): Promise<Pick<ActionOutcome, 'value' | 'screenshot'>> {
  const { page, signal } = ctx;
  const remaining = () => Math.max(1, Math.floor(ctx.deadline - performance.now()));
  switch (action.type) {
    case 'click': {
      const el = await element(ctx, action.selector);
      await abortable(el.click({ timeout: Math.min(ACTION_ELEMENT_MS, remaining()) }), signal);
      return {};
    }
    case 'write': {
      if (action.selector === undefined) {
        // Typed into the focused element (Firecrawl's write), as one input: a page listening to keys sees the text arrive.
        const focused = await abortable(page.evaluate('(() => { const a = document.activeElement; return a !== null && a !== document.body && a !== document.documentElement; })()'), signal);
        if (focused !== true) throw new ActionError('no element has the focus (click the field first, or give write a selector)');
        await abortable(page.keyboard.insertText(action.text), signal);
        return {};
      }
      const el = await element(ctx, action.selector);
      await abortable(el.fill(action.text, { timeout: Math.min(ACTION_ELEMENT_MS, remaining()) }), signal);
      return {};
    }
    case 'press':
      await abortable(page.keyboard.press(action.key), signal);
      return {};
    case 'scroll': {
      if ('direction' in action) {
        const dy = action.direction === 'down' ? action.amount : -action.amount;
        await abortable(page.evaluate(`(document.scrollingElement || document.documentElement).scrollBy(0, ${dy})`), signal);
        return {};
      }
      return { value: await scrollToBottom(ctx, action.maxSteps) };
    }
    case 'wait': {
      if ('selector' in action) {
        const bound = Math.min(action.milliseconds, remaining());
        try {
          await abortable(page.waitForSelector(engineSelector(action.selector), { state: 'attached', timeout: bound }), signal);
        } catch (e) {
          if (isTimeout(e)) throw new ActionError(`no element matched "${action.selector.selector}" within ${seconds(bound)}`);
          throw e;
        }
        return {};
      }
      await sleep(Math.min(action.milliseconds, remaining()), signal);
      return {};
    }
    case 'screenshot':
      return { screenshot: await abortable(ctx.screenshot(action.fullPage, remaining), signal) };
    case 'execute_javascript':
      return await script(ctx, action.script, Math.min(SCRIPT_TIMEOUT_MS, remaining()));
  }
}

/**
 * Scroll to the bottom, then again while the page grows (what it loads
 * when its end comes into view), at most `maxSteps` times; `{ steps, height }`.
 */
async function scrollToBottom(ctx: ActionContext, maxSteps: number): Promise<{ steps: number; height: number }> {
  const heightOf = 'Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)';
  let height = await abortable(ctx.page.evaluate(heightOf), ctx.signal) as number;
  let steps = 0;
  while (steps < maxSteps && ctx.deadline - performance.now() > 1) {
    await abortable(ctx.page.evaluate('(document.scrollingElement || document.documentElement).scrollTo(0, 1e9)'), ctx.signal);
    steps++;
    await settle(ctx);
    const now = await abortable(ctx.page.evaluate(heightOf), ctx.signal) as number;
    if (!(now > height)) break;
    height = now;
  }
  return { steps, height };
}

/** The in-page half of execute_javascript's value: JSON, or why not, never more than the bound. */
const SERIALISE = `function (max) {
  let s;
  try { s = JSON.stringify(this.v); } catch (e) { return { error: 'its return value is not JSON-serialisable (' + String(e && e.message || e).slice(0, 200) + ')' }; }
  if (typeof s !== 'string') return { none: true };
  if (s.length > max) return { error: 'its return value is larger than ' + (max / 1024) + ' KiB as JSON' };
  return { json: s };
}`;

/** Compiles (never runs) `source` as an async function's body: a SyntaxError when it is not one on its own. */
const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (body: string) => unknown;

async function script(ctx: ActionContext, source: string, bound: number): Promise<Pick<ActionOutcome, 'value'>> {
  // Only a source that is a function body on its own is wrapped: one that closes the wrapper early could make
  // the expression's value a primitive (sent back whole, whatever its size) instead of the object serialised below.
  try {
    new AsyncFunction(source);
  } catch (e) {
    throw new ActionError(`the script is not valid JavaScript as the body of an async function (${errText(e)})`);
  }
  // The newline lets a last-line comment end without swallowing the wrapper.
  const expression = `(async () => ({ v: await (async () => {\n${source}\n})() }))()`;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ActionError(`the script did not finish within ${seconds(bound)}`)), bound);
  });
  const evaluated = ctx.cdp.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: false, userGesture: true, replMode: false });
  try {
    const r = await abortable(Promise.race([evaluated, timedOut]), ctx.signal);
    if (r.exceptionDetails !== undefined) {
      const d = r.exceptionDetails;
      throw new ActionError(`the script threw: ${errText(d.exception?.description ?? d.text)}`);
    }
    // Always the wrapper object (a primitive would come back whole): its `v` is serialised in the page, bounded.
    if (r.result.objectId === undefined) throw new ActionError('its return value could not be read');
    const called = await abortable(ctx.cdp.send('Runtime.callFunctionOn', {
      objectId: r.result.objectId, functionDeclaration: SERIALISE, arguments: [{ value: MAX_SCRIPT_RESULT_BYTES }], returnByValue: true,
    }), ctx.signal);
    void ctx.cdp.send('Runtime.releaseObject', { objectId: r.result.objectId }).catch(() => undefined);
    const v = called.result.value as { json?: unknown; error?: unknown; none?: unknown } | undefined;
    if (called.exceptionDetails !== undefined || v === undefined || v === null || typeof v !== 'object') throw new ActionError('its return value could not be read');
    if (typeof v.error === 'string') throw new ActionError(v.error.slice(0, MAX_ERROR_CHARS));
    if (v.none === true) return {};
    if (typeof v.json !== 'string' || Buffer.byteLength(v.json, 'utf8') > MAX_SCRIPT_RESULT_BYTES) {
      throw new ActionError(`its return value is larger than ${MAX_SCRIPT_RESULT_BYTES / 1024} KiB as JSON`);
    }
    return { value: JSON.parse(v.json) as unknown };
  } catch (e) {
    if (e instanceof ActionError && /did not finish/.test(e.message)) {
      // Stop the script, an endless loop included, so the page can still be read.
      await ctx.cdp.send('Runtime.terminateExecution').catch(() => undefined);
      evaluated.catch(() => undefined);
    }
    throw e;
  } finally {
    clearTimeout(timer);
  }
}
