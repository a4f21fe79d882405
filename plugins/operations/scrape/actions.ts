/**
 * Browser actions on a scrape (issue 29, section 1), the request side: the
 * `actions` schema, the checks JSON Schema cannot express (which fields each
 * action type takes, selectors that can be parsed, keys the browser knows),
 * reported at once with their paths (`actions[3].selector`), and the
 * conversion into the fetch contract's BrowserAction (core/page.ts) that the
 * browser fetcher runs (plugins/fetchers/browser/actions.ts).
 *
 * One object schema with every field optional and the fields each type
 * needs as if/then rules, rather than a union of one object per type: a
 * union's errors name the branch the validator liked best, which for a
 * mistyped action is the wrong one; here an unknown type is one problem
 * listing the types, and a known one gets its own fields' problems, each
 * at its path.
 */
import { createRequire } from 'node:module';
import { compile } from 'css-select';
import type { FieldIssue } from '../../../core/errors.js';
import type { ActionRequest, BrowserAction, BrowserActionType, SelectorSpec } from '../../../core/page.js';
import type { Unchecked } from '../../../core/schema.js';
import { StrictObject, Type } from '../../sdk/index.js';

export const ACTION_LIMITS = {
  /** Actions in one request. */
  actions: 50,
  selectorChars: 1000,
  textChars: 10_000,
  scriptChars: 20_000,
  /** One scroll step, in CSS pixels. */
  scrollAmount: 100_000,
  /** Scrolls to the bottom in one action, at most. */
  maxSteps: 100,
  /** One wait. */
  waitMs: 60_000,
} as const;

/** The default bound of a wait for a selector (as wait_for's), and of scroll to bottom's steps. */
export const DEFAULT_SELECTOR_WAIT_MS = 10_000;
export const DEFAULT_MAX_STEPS = 10;
/** A scroll by direction without an amount: one viewport's height, about. */
export const DEFAULT_SCROLL_AMOUNT = 800;

const ACTION_TYPES: readonly BrowserActionType[] = ['click', 'write', 'press', 'scroll', 'wait', 'screenshot', 'execute_javascript'];

/** The fields each type takes: required ones first, then optional ones (wait needs milliseconds, selector or both). */
const TAKES: Readonly<Record<BrowserActionType, { readonly required: readonly string[]; readonly optional: readonly string[] }>> = {
  click: { required: ['selector'], optional: [] },
  write: { required: ['text'], optional: ['selector'] },
  press: { required: ['key'], optional: [] },
  scroll: { required: [], optional: ['direction', 'amount', 'to', 'max_steps'] },
  wait: { required: [], optional: ['milliseconds', 'selector'] },
  screenshot: { required: [], optional: ['full_page'] },
  execute_javascript: { required: ['script'], optional: [] },
};

const Selector = Type.String({
  minLength: 1, maxLength: ACTION_LIMITS.selectorChars,
  description: 'click, write, wait: a CSS selector, or an XPath (starting with / or ( or xpath=), as wait_for.',
});

export const ActionSchema = StrictObject({
  type: Type.Union(ACTION_TYPES.map((t) => Type.Literal(t))),
  selector: Type.Optional(Selector),
  text: Type.Optional(Type.String({ maxLength: ACTION_LIMITS.textChars, description: 'write: the text the element is filled with (its value replaced); without selector, typed into the element that has the focus.' })),
  key: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'press: a key (Enter, Tab, Escape, ArrowDown, a character, ...), with modifiers as Control+A.' })),
  direction: Type.Optional(Type.Union([Type.Literal('down'), Type.Literal('up')], { description: 'scroll: by `amount` pixels (default 800) down (the default) or up.' })),
  amount: Type.Optional(Type.Integer({ minimum: 1, maximum: ACTION_LIMITS.scrollAmount, description: 'scroll with direction: CSS pixels.' })),
  to: Type.Optional(Type.Literal('bottom', { description: 'scroll: to the bottom, again while the page grows (infinite scroll), at most max_steps times.' })),
  max_steps: Type.Optional(Type.Integer({ minimum: 1, maximum: ACTION_LIMITS.maxSteps, description: `scroll to bottom: at most this many times (default ${DEFAULT_MAX_STEPS}).` })),
  milliseconds: Type.Optional(Type.Integer({ minimum: 1, maximum: ACTION_LIMITS.waitMs, description: `wait: this long; with selector, at most this long for it (default ${DEFAULT_SELECTOR_WAIT_MS}).` })),
  full_page: Type.Optional(Type.Boolean({ description: 'screenshot: the whole page, not just the viewport.' })),
  script: Type.Optional(Type.String({
    minLength: 1, maxLength: ACTION_LIMITS.scriptChars,
    description: 'execute_javascript: the body of an async function run in the page; its JSON-serialisable return value (at most 64 KiB as JSON) is the action\'s value. At most 10 s.',
  })),
}, {
  // What each type needs, in the schema so that a field given but refused (too long, say) is not also called missing.
  allOf: [
    ...(['click', 'write', 'press', 'execute_javascript'] as const).map((t) => ({
      if: { properties: { type: { const: t } }, required: ['type'] },
      then: { required: [...TAKES[t].required] },
    })),
    { if: { properties: { type: { const: 'wait' } }, required: ['type'] }, then: { anyOf: [{ required: ['milliseconds'] }, { required: ['selector'] }] } },
  ],
});

const ACTION_TS_TYPE = [
  '{ type: "click"; selector: string }',
  '{ type: "write"; selector?: string; text: string }',
  '{ type: "press"; key: string }',
  '{ type: "scroll"; direction?: "down" | "up"; amount?: number }',
  '{ type: "scroll"; to: "bottom"; max_steps?: number }',
  '{ type: "wait"; milliseconds: number }',
  '{ type: "wait"; selector: string; milliseconds?: number }',
  '{ type: "screenshot"; full_page?: boolean }',
  '{ type: "execute_javascript"; script: string }',
].join(' | ');

/** One action as a client writes it (what ACTION_TS_TYPE says to the generated client; test/types/client-types.ts holds them equal). */
export type ActionInput =
  | { type: 'click'; selector: string }
  | { type: 'write'; selector?: string; text: string }
  | { type: 'press'; key: string }
  | { type: 'scroll'; direction?: 'down' | 'up'; amount?: number }
  | { type: 'scroll'; to: 'bottom'; max_steps?: number }
  | { type: 'wait'; milliseconds: number }
  | { type: 'wait'; selector: string; milliseconds?: number }
  | { type: 'screenshot'; full_page?: boolean }
  | { type: 'execute_javascript'; script: string };

/** The request fields: `actions` and `actions_required`. */
export const ActionFields = {
  // The schema validates; its static type is the union a client writes (the schema's own is every field optional).
  actions: Type.Optional(Type.Unsafe<ActionInput[]>(Type.Array(ActionSchema, {
    minItems: 1, maxItems: ACTION_LIMITS.actions,
    description: 'Extension: with render_js, browser actions run in order after the page loads (click, write, press, scroll, wait, screenshot, execute_javascript); the page is read after the last one. A failed action stops the rest and is reported in actions.results. +1 credit; each screenshot action +3 (docs/scrape.md#actions-click-write-scroll-script).',
    tsType: `Array<${ACTION_TS_TYPE}>`,
  }))),
  actions_required: Type.Optional(Type.Boolean({ description: 'Extension: with actions, a failed action fails the scrape (422 ACTION_FAILED, not charged) instead of reading the page as it stood.' })),
};

/** XPath as wait_for reads it: an `xpath=` prefix, or a start with / or (. */
export function selectorSpec(s: string): SelectorSpec {
  if (s.startsWith('xpath=')) return { kind: 'xpath', selector: s.slice(6) };
  const t = s.trimStart();
  if (t.startsWith('/') || t.startsWith('(')) return { kind: 'xpath', selector: s };
  return { kind: 'css', selector: s };
}

interface XPathLib { parse(expression: string): unknown }
let xpathLib: XPathLib | undefined;
const xpath = (): XPathLib => (xpathLib ??= createRequire(import.meta.url)('xpath') as XPathLib);

/**
 * Pseudo-classes browsers know that css-select (the parser used here) does
 * not: accepted, and left to the browser.
 */
const BROWSER_PSEUDO = new Set([
  'focus-visible', 'focus-within', 'target', 'target-within', 'defined', 'fullscreen', 'modal', 'placeholder-shown', 'autofill',
  'default', 'indeterminate', 'in-range', 'out-of-range', 'invalid', 'valid', 'user-invalid', 'user-valid', 'read-only', 'read-write',
  'playing', 'paused', 'any-link', 'local-link', 'popover-open', 'open', 'closed', 'dir', 'host', 'state', 'lang', 'optional', 'required',
]);

/** Why a selector cannot be used, or undefined. */
export function selectorProblem(s: string): string | undefined {
  const spec = selectorSpec(s);
  if (spec.selector.trim() === '') return 'is empty';
  if (spec.kind === 'xpath') {
    try {
      xpath().parse(spec.selector);
      return undefined;
    } catch (e) {
      return `is not a valid XPath expression (${e instanceof Error ? e.message : String(e)})`;
    }
  }
  try {
    compile(spec.selector);
    return undefined;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const pseudo = /^Unknown pseudo-class :([\w-]+)/.exec(message);
    if (pseudo !== null && BROWSER_PSEUDO.has(pseudo[1]!.toLowerCase())) return undefined;
    if (/^Pseudo-elements are not supported/.test(message)) return 'is a pseudo-element, which matches no element';
    return `is not a valid CSS selector (${message})`;
  }
}

/** Compiles (never runs) a source as an async function's body. */
const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (body: string) => unknown;

/** Why a script cannot be run as the body of an async function (a SyntaxError), or undefined. */
export function scriptProblem(source: string): string | undefined {
  try {
    new AsyncFunction(source);
    return undefined;
  } catch (e) {
    const message = (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).slice(0, 300);
    return `is not valid JavaScript as the body of an async function (${message})`;
  }
}

/** Key names the browser's keyboard knows besides single characters (Playwright's US layout). */
const KEY_NAMES = new Set([
  'Enter', 'Tab', 'Escape', 'Backspace', 'Delete', 'Insert', 'Space', 'Home', 'End', 'PageUp', 'PageDown',
  'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Shift', 'Control', 'Alt', 'Meta', 'ControlOrMeta',
  ...Array.from({ length: 12 }, (_, n) => `F${n + 1}`),
]);
const MODIFIERS = new Set(['Shift', 'Control', 'Alt', 'Meta', 'ControlOrMeta']);

/** Why a key cannot be pressed, or undefined: modifiers joined by +, then a known key name or one character. */
export function keyProblem(key: string): string | undefined {
  // A lone "+" is the plus key; "Control++" is Control and plus.
  const parts = key.endsWith('++') ? [...key.slice(0, -2).split('+'), '+'] : key === '+' ? ['+'] : key.split('+');
  const last = parts.pop()!;
  for (const m of parts) if (!MODIFIERS.has(m)) return `"${m}" is not a modifier (Shift, Control, Alt, Meta, ControlOrMeta)`;
  if (KEY_NAMES.has(last)) return undefined;
  const chars = [...last];
  if (chars.length === 1 && !/[\u0000-\u001f\u007f]/.test(last)) return undefined;
  return `"${last}" is not a key: a name (Enter, Tab, Escape, Backspace, Delete, ArrowDown, PageDown, Home, End, F1...) or one character`;
}

/**
 * The checks of `actions` the schema cannot express, over whatever passed
 * it (any field, any item may be missing): render_js, the fields each type
 * takes, selectors, keys, the forms of scroll and wait.
 */
export function actionIssues(i: Unchecked<{ render_js?: boolean; actions?: ActionRequest[]; actions_required?: boolean }>): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (i.actions !== undefined && i.render_js !== true) issues.push({ field: 'actions', message: 'needs render_js: true (actions run in the browser)' });
  if (i.actions_required !== undefined && i.actions === undefined) issues.push({ field: 'actions_required', message: 'only applies with actions' });
  (i.actions ?? []).forEach((a, n) => {
    if (a === undefined || a === null || typeof a !== 'object') return;
    const at = `actions[${n}]`;
    const type = a.type;
    // A missing or unknown type was reported by the schema; its other fields cannot be judged.
    if (type === undefined || !(type in TAKES)) return;
    const takes = TAKES[type];
    const rec = a as unknown as Record<string, unknown>;
    const taken = [...takes.required, ...takes.optional];
    for (const f of Object.keys(rec)) {
      if (f === 'type' || taken.includes(f) || !(f in ActionSchema.properties)) continue;
      issues.push({ field: `${at}.${f}`, message: `does not apply to ${type} (it takes ${taken.join(', ') || 'nothing else'})` });
    }
    if (typeof a.selector === 'string' && taken.includes('selector')) {
      const problem = selectorProblem(a.selector);
      if (problem !== undefined) issues.push({ field: `${at}.selector`, message: problem });
    }
    if (type === 'press' && typeof a.key === 'string') {
      const problem = keyProblem(a.key);
      if (problem !== undefined) issues.push({ field: `${at}.key`, message: problem });
    }
    if (type === 'execute_javascript' && typeof a.script === 'string') {
      const problem = scriptProblem(a.script);
      if (problem !== undefined) issues.push({ field: `${at}.script`, message: problem });
    }
    if (type === 'scroll') {
      if (a.to !== undefined && (a.direction !== undefined || a.amount !== undefined)) {
        issues.push({ field: at, message: 'scroll takes either direction (and amount) or to: "bottom" (and max_steps), not both' });
      } else if (a.max_steps !== undefined && a.to === undefined) {
        issues.push({ field: `${at}.max_steps`, message: 'only applies with to: "bottom"' });
      }
    }
  });
  return issues;
}

/** A validated request's actions as the browser fetcher takes them. */
export function browserActions(actions: readonly ActionRequest[]): BrowserAction[] {
  return actions.map((a): BrowserAction => {
    switch (a.type) {
      case 'click': return { type: 'click', selector: selectorSpec(a.selector!) };
      case 'write': return a.selector === undefined ? { type: 'write', text: a.text! } : { type: 'write', selector: selectorSpec(a.selector), text: a.text! };
      case 'press': return { type: 'press', key: a.key! };
      case 'scroll': return a.to === 'bottom'
        ? { type: 'scroll', to: 'bottom', maxSteps: a.max_steps ?? DEFAULT_MAX_STEPS }
        : { type: 'scroll', direction: a.direction ?? 'down', amount: a.amount ?? DEFAULT_SCROLL_AMOUNT };
      case 'wait': return a.selector !== undefined
        ? { type: 'wait', selector: selectorSpec(a.selector), milliseconds: a.milliseconds ?? DEFAULT_SELECTOR_WAIT_MS }
        : { type: 'wait', milliseconds: a.milliseconds! };
      case 'screenshot': return { type: 'screenshot', fullPage: a.full_page ?? false };
      case 'execute_javascript': return { type: 'execute_javascript', script: a.script! };
    }
  });
}
