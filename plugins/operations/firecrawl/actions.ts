/**
 * Firecrawl's page actions in Scour's native shape (scrape's `actions`):
 * wait, click, write, press, scroll, screenshot, executeJavascript. A pure
 * translation: what has no native counterpart is dropped with a note, what
 * is malformed is a field issue at Firecrawl's path (`actions[2].selector`).
 *
 *   Firecrawl                                   native
 *   {type:"wait", milliseconds} | {selector}    same
 *   {type:"click", selector}                    same (`all` dropped, noted)
 *   {type:"write", text}                        {type:"write", text}: no selector, it types into the focused element
 *   {type:"press", key}                         same
 *   {type:"scroll", direction, selector?}       {type:"scroll", direction, amount: one viewport (800 px)}; selector dropped, noted
 *   {type:"screenshot", fullPage}               {type:"screenshot", full_page}
 *   {type:"executeJavascript", script}          {type:"execute_javascript", script}
 *   {type:"scrape"}                             dropped, noted (the page is scraped at the end anyway)
 *   {type:"pdf"}, anything else                 dropped, noted
 */
import type { FieldIssue } from '../../../core/errors.js';

export type NativeAction =
  | { readonly type: 'wait'; readonly milliseconds: number }
  | { readonly type: 'wait'; readonly selector: string }
  | { readonly type: 'click'; readonly selector: string }
  | { readonly type: 'write'; readonly text: string; readonly selector?: string }
  | { readonly type: 'press'; readonly key: string }
  | { readonly type: 'scroll'; readonly direction: 'up' | 'down'; readonly amount: number }
  | { readonly type: 'screenshot'; readonly full_page: boolean }
  | { readonly type: 'execute_javascript'; readonly script: string };

export interface TranslatedActions {
  readonly actions: NativeAction[];
  /** What was dropped or changed, for the answer's warning. */
  readonly notes: string[];
  readonly issues: FieldIssue[];
}

/** Firecrawl's bound on actions per request. */
export const MAX_ACTIONS = 50;
/** A scroll without an amount moves one viewport. */
export const SCROLL_AMOUNT = 800;
const MAX_TEXT = 10_000;
const MAX_SCRIPT = 100_000;
const MAX_WAIT_MS = 60_000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown, max: number): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;
const clip = (s: string) => (s.length <= 40 ? s : `${s.slice(0, 40)}…`);

export function translateActions(input: unknown, field = 'actions'): TranslatedActions {
  const actions: NativeAction[] = [];
  const notes: string[] = [];
  const issues: FieldIssue[] = [];
  if (!Array.isArray(input)) return { actions, notes, issues: [{ field, message: 'must be an array of actions' }] };
  if (input.length > MAX_ACTIONS) return { actions, notes, issues: [{ field, message: `at most ${MAX_ACTIONS} actions` }] };
  input.forEach((a, n) => {
    const at = `${field}[${n}]`;
    if (!isObject(a) || typeof a.type !== 'string') {
      issues.push({ field: at, message: 'must be an object with a string type' });
      return;
    }
    const need = (key: string, ok: boolean, what: string): boolean => {
      if (!ok) issues.push({ field: `${at}.${key}`, message: what });
      return ok;
    };
    switch (a.type) {
      case 'wait': {
        if (a.selector !== undefined) {
          if (need('selector', text(a.selector, 1000), 'must be a CSS selector of 1 to 1000 characters')) actions.push({ type: 'wait', selector: a.selector as string });
        } else if (need('milliseconds', Number.isInteger(a.milliseconds) && (a.milliseconds as number) >= 1 && (a.milliseconds as number) <= MAX_WAIT_MS, `must be an integer from 1 to ${MAX_WAIT_MS} (or give a selector)`)) {
          actions.push({ type: 'wait', milliseconds: a.milliseconds as number });
        }
        return;
      }
      case 'click':
        if (need('selector', text(a.selector, 1000), 'must be a CSS selector of 1 to 1000 characters')) actions.push({ type: 'click', selector: a.selector as string });
        if (a.all === true) notes.push(`${at}: all is not supported; the first match is clicked`);
        return;
      case 'write':
        if (need('text', typeof a.text === 'string' && a.text.length <= MAX_TEXT, `must be a string of at most ${MAX_TEXT} characters`)) actions.push({ type: 'write', text: a.text as string });
        return;
      case 'press':
        if (need('key', text(a.key, 64), 'must be a key name of 1 to 64 characters')) actions.push({ type: 'press', key: a.key as string });
        return;
      case 'scroll': {
        const direction = a.direction ?? 'down';
        if (need('direction', direction === 'up' || direction === 'down', 'must be "up" or "down"')) actions.push({ type: 'scroll', direction: direction as 'up' | 'down', amount: SCROLL_AMOUNT });
        if (a.selector !== undefined) notes.push(`${at}: scrolling an element (selector) is not supported; the page is scrolled`);
        return;
      }
      case 'screenshot':
        actions.push({ type: 'screenshot', full_page: a.fullPage === true });
        if (a.quality !== undefined || a.viewport !== undefined) notes.push(`${at}: quality and viewport are ignored`);
        return;
      case 'executeJavascript':
        if (need('script', text(a.script, MAX_SCRIPT), `must be a script of 1 to ${MAX_SCRIPT} characters`)) actions.push({ type: 'execute_javascript', script: a.script as string });
        return;
      case 'scrape':
        notes.push(`${at}: scrape actions are dropped; the page is scraped once, after the last action`);
        return;
      default:
        notes.push(`${at}: action type "${clip(a.type)}" is not supported; dropped`);
    }
  });
  return { actions, notes, issues };
}
