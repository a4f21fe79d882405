/** Case table for the color-converter tool: run in process (test/tools) and over both HTTP adapters (test/http). */
import { expect } from 'vitest';
import type { ToolCaseFile } from '../../support/tool-harness.js';

/** Known values: CSS Color 4 (rebeccapurple = #663399 = rgb(102 51 153) = hsl(270 50% 40%)), WCAG 2 contrast (black/white 21, #777 on white 4.478). */
const REBECCA = {
  hex: '#663399',
  rgb: { r: 102, g: 51, b: 153 },
  hsl: { h: 270, s: 50, l: 40 },
  hsv: { h: 270, s: 67, v: 60 },
  hwb: { h: 270, w: 20, b: 40 },
  cmyk: { c: 33, m: 67, y: 0, k: 40 },
};

const isRebecca = (b: any) => {
  expect(b.hex).toBe(REBECCA.hex);
  expect(b.rgb).toEqual(REBECCA.rgb);
  expect(b.hsl).toEqual(REBECCA.hsl);
  expect(b.hsv).toEqual(REBECCA.hsv);
  expect(b.hwb).toEqual(REBECCA.hwb);
  expect(b.cmyk).toEqual(REBECCA.cmyk);
  expect(b.closest_name).toBe('rebeccapurple');
};

const close = (actual: number, expected: number, tol = 0.05) => expect(Math.abs(actual - expected)).toBeLessThanOrEqual(tol);

export default {
  slug: 'color-converter',
  cases: [
    {
      name: 'CSS name rebeccapurple in every model',
      body: { color: 'rebeccapurple' },
      status: 200,
      check: (b) => {
        isRebecca(b);
        expect(b.input).toBe('rebeccapurple');
        expect(b.format_detected).toBe('name');
        expect(b.hex8).toBe('#663399ff');
        expect(b.alpha).toBe(1);
        expect(b.name).toBe('rebeccapurple');
        expect(b.css.rgb).toBe('rgb(102, 51, 153)');
        expect(b.css.hsl).toBe('hsl(270, 50%, 40%)');
        expect(b.css.hwb).toBe('hwb(270 20% 40%)');
        expect(b.css.hex).toBe('#663399');
        expect(b.css.cmyk).toBe('device-cmyk(33% 67% 0% 40%)');
        expect(b.is_dark).toBe(true);
        expect(b.best_text_color).toBe('#ffffff');
        // CSS Color 4 sample: rebeccapurple = lab(32.39% 38.43 -47.69) = lch(32.39% 61.25 308.86)
        close(b.lab.l, 32.39); close(b.lab.a, 38.43); close(b.lab.b, -47.69);
        close(b.lch.l, 32.39); close(b.lch.c, 61.25); close(b.lch.h, 308.86);
      },
    },
    { name: 'hex #663399', body: { color: '#663399' }, status: 200, check: (b) => { isRebecca(b); expect(b.format_detected).toBe('hex'); } },
    { name: 'short hex #639', body: { color: '#639' }, status: 200, check: (b) => { isRebecca(b); expect(b.format_detected).toBe('hex'); } },
    { name: 'upper-case hex', body: { color: '#663399'.toUpperCase() }, status: 200, check: (b) => isRebecca(b) },
    { name: 'legacy rgb()', body: { color: 'rgb(102, 51, 153)' }, status: 200, check: (b) => { isRebecca(b); expect(b.format_detected).toBe('rgb'); } },
    { name: 'hsl()', body: { color: 'hsl(270, 50%, 40%)' }, status: 200, check: (b) => { isRebecca(b); expect(b.format_detected).toBe('hsl'); } },
    { name: 'modern hsl() with deg', body: { color: 'hsl(270deg 50% 40%)' }, status: 200, check: (b) => isRebecca(b) },
    { name: 'hwb()', body: { color: 'hwb(270 20% 40%)' }, status: 200, check: (b) => { isRebecca(b); expect(b.format_detected).toBe('hwb'); } },
    { name: 'lab()', body: { color: 'lab(32.39% 38.43 -47.69)' }, status: 200, check: (b) => { isRebecca(b); expect(b.format_detected).toBe('lab'); } },
    { name: 'lch()', body: { color: 'lch(32.39% 61.25 308.86)' }, status: 200, check: (b) => { isRebecca(b); expect(b.format_detected).toBe('lch'); } },
    { name: 'cmyk()', body: { color: 'cmyk(0% 0% 0% 100%)' }, status: 200, check: (b) => { expect(b.hex).toBe('#000000'); expect(b.format_detected).toBe('cmyk'); } },
    { name: 'device-cmyk()', body: { color: 'device-cmyk(0 1 1 0)' }, status: 200, check: (b) => { expect(b.hex).toBe('#ff0000'); expect(b.name).toBe('red'); } },
    { name: 'oklch()', body: { color: 'oklch(1 0 0)' }, status: 200, check: (b) => { expect(b.hex).toBe('#ffffff'); expect(b.format_detected).toBe('oklch'); } },
    { name: 'name is case-insensitive and trimmed', body: { color: '  RebeccaPurple ' }, status: 200, check: (b) => { isRebecca(b); expect(b.input).toBe('  RebeccaPurple '); } },
    {
      name: '#rrggbbaa with half alpha',
      body: { color: '#66339980' },
      status: 200,
      check: (b) => {
        expect(b.alpha).toBe(0.5);
        expect(b.hex).toBe('#663399');
        expect(b.hex8).toBe('#66339980');
        expect(b.rgb).toEqual(REBECCA.rgb);
        expect(b.css.rgb).toBe('rgba(102, 51, 153, 0.5)');
        expect(b.css.hex).toBe('#66339980');
        expect(b.name).toBeNull();
        expect(b.closest_name).toBe('rebeccapurple');
      },
    },
    { name: 'rgb() with slash alpha percentage', body: { color: 'rgb(102 51 153 / 50%)' }, status: 200, check: (b) => { expect(b.alpha).toBe(0.5); expect(b.hex8).toBe('#66339980'); } },
    {
      name: 'black: contrast 21 against white',
      body: { color: 'black' },
      status: 200,
      check: (b) => {
        expect(b.hex).toBe('#000000');
        expect(b.contrast).toEqual({ against_white: 21, against_black: 1 });
        expect(b.luminance).toBe(0);
        expect(b.cmyk).toEqual({ c: 0, m: 0, y: 0, k: 100 });
        expect(b.best_text_color).toBe('#ffffff');
      },
    },
    {
      name: 'white: luminance 1, lab 100/0/0',
      body: { color: '#fff' },
      status: 200,
      check: (b) => {
        expect(b.luminance).toBe(1);
        expect(b.contrast).toEqual({ against_white: 1, against_black: 21 });
        expect(b.lab).toEqual({ l: 100, a: 0, b: 0 });
        expect(b.is_dark).toBe(false);
        expect(b.name).toBe('white');
        expect(b.best_text_color).toBe('#000000');
      },
    },
    // #777 on white: 1.05 / (0.18447 + 0.05) = 4.478..., reported rounded down so it never passes a threshold it misses.
    { name: '#777 on white is 4.47 (just fails WCAG AA)', body: { color: '#777777' }, status: 200, check: (b) => { expect(b.contrast.against_white).toBe(4.47); expect(b.name).toBeNull(); } },
    {
      name: 'red: HSL 0/100/50, CSS Color 4 lab',
      body: { color: 'red' },
      status: 200,
      check: (b) => {
        expect(b.hsl).toEqual({ h: 0, s: 100, l: 50 });
        expect(b.contrast.against_white).toBe(3.99);
        close(b.lab.l, 54.29); close(b.lab.a, 80.82); close(b.lab.b, 69.88);
      },
    },
    { name: 'transparent keyword', body: { color: 'transparent' }, status: 200, check: (b) => { expect(b.alpha).toBe(0); expect(b.hex8).toBe('#00000000'); expect(b.name).toBe('transparent'); } },
    { name: 'out-of-gamut rgb is clamped as CSS does', body: { color: 'rgb(300, -5, 0)' }, status: 200, check: (b) => expect(b.rgb).toEqual({ r: 255, g: 0, b: 0 }) },
    { name: 'closest name for an unnamed color', body: { color: '#fe0000' }, status: 200, check: (b) => { expect(b.name).toBeNull(); expect(b.closest_name).toBe('red'); } },

    // hostile and invalid
    { name: 'missing color', body: {}, status: 400, fields: ['color'] },
    { name: 'color is a number', body: { color: 0x663399 }, status: 400, fields: ['color'] },
    { name: 'color is null', body: { color: null }, status: 400, fields: ['color'] },
    { name: 'color is an object', body: { color: { r: 1, g: 2, b: 3 } }, status: 400, fields: ['color'] },
    { name: 'empty color', body: { color: '' }, status: 400, fields: ['color'] },
    { name: 'only whitespace', body: { color: '   ' }, status: 400, fields: ['color'] },
    { name: 'oversize color', body: { color: `#${'f'.repeat(300)}` }, status: 400, fields: ['color'] },
    { name: 'unknown field', body: { color: 'red', precision: 2 }, status: 400, fields: ['precision'] },
    { name: 'unknown name', body: { color: 'notacolor' }, status: 400, fields: ['color'] },
    { name: 'bad hex digits', body: { color: '#ggg' }, status: 400, fields: ['color'] },
    { name: 'five hex digits', body: { color: '#12345' }, status: 400, fields: ['color'] },
    { name: 'hex without #', body: { color: '663399x' }, status: 400, fields: ['color'] },
    { name: 'rgb with two channels', body: { color: 'rgb(1, 2)' }, status: 400, fields: ['color'] },
    { name: 'unclosed hsl', body: { color: 'hsl(270, 50%, 40%' }, status: 400, fields: ['color'] },
    { name: 'NaN channel', body: { color: 'hsl(NaN, 1%, 1%)' }, status: 400, fields: ['color'] },
    { name: 'huge component', body: { color: 'lch(50% 1e308 0)' }, status: 400, fields: ['color'] },
    { name: 'huge lab component', body: { color: 'lab(50 1e400 0)' }, status: 400, fields: ['color'] },
    { name: 'unsupported color() function', body: { color: 'color(srgb 1 0 0)' }, status: 400, fields: ['color'] },
    { name: '__proto__ as a name', body: { color: '__proto__' }, status: 400, fields: ['color'] },
    { name: 'constructor as a name', body: { color: 'constructor' }, status: 400, fields: ['color'] },
    { name: 'NUL byte inside a name', body: { color: 're\u0000d' }, status: 400, fields: ['color'] },
    { name: 'lone surrogate', body: { color: '\ud800' }, status: 400, fields: ['color'] },
    { name: 'body is an array', body: ['red'], status: 400 },
  ],
} satisfies ToolCaseFile;
