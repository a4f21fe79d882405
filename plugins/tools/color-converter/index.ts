/**
 * color-converter: parse any CSS color and answer it in every common model,
 * with its CSS name, relative luminance and WCAG contrast. colord (MIT) does
 * the parsing and conversions; it has no string parser for `lab()` or plain
 * `cmyk()`, so those two spellings are read here and handed to colord as
 * objects / `device-cmyk()`.
 */
import { colord, extend, getFormat, type Colord } from 'colord';
import a11yPlugin from 'colord/plugins/a11y';
import cmykPlugin from 'colord/plugins/cmyk';
import hwbPlugin from 'colord/plugins/hwb';
import labPlugin from 'colord/plugins/lab';
import lchPlugin from 'colord/plugins/lch';
import namesPlugin from 'colord/plugins/names';
import oklabPlugin from 'colord/plugins/oklab';
import oklchPlugin from 'colord/plugins/oklch';
import { defineTool, StrictObject, Type, invalid } from '../../sdk/index.js';

extend([namesPlugin, cmykPlugin, hwbPlugin, labPlugin, lchPlugin, oklabPlugin, oklchPlugin, a11yPlugin]);

const FORMATS = ['name', 'hex', 'rgb', 'hsl', 'hwb', 'lab', 'lch', 'oklab', 'oklch', 'cmyk'] as const;
type Format = (typeof FORMATS)[number];

const NUM = String.raw`([+-]?(?:\d+(?:\.\d+)?|\.\d+)(?:e[+-]?\d+)?)`;
/** CSS Color 4 `lab(L a b [/ alpha])`: L in 0..100 (or %), a and b unbounded numbers (100% = 125). */
const LAB_RE = new RegExp(String.raw`^lab\(\s*${NUM}(%)?\s+${NUM}(%)?\s+${NUM}(%)?\s*(?:\/\s*${NUM}(%)?\s*)?\)$`, 'i');

function parseLab(s: string): Colord | null {
  const m = LAB_RE.exec(s);
  if (!m) return null;
  const l = Number(m[1]);
  const a = Number(m[3]) * (m[4] ? 1.25 : 1);
  const b = Number(m[5]) * (m[6] ? 1.25 : 1);
  const alpha = m[7] === undefined ? 1 : Number(m[7]) / (m[8] ? 100 : 1);
  if (![l, a, b, alpha].every(Number.isFinite)) return null;
  const c = colord({ l: Math.min(100, Math.max(0, l)), a, b, alpha: Math.min(1, Math.max(0, alpha)) });
  return c.isValid() ? c : null;
}

const ANY_NUM_RE = new RegExp(NUM, 'gi');
/** No real color has a component beyond this; larger values only reach colord's NaN/Infinity corners. */
const MAX_COMPONENT = 1e6;

function parse(raw: string): { color: Colord; format: Format } | 'out_of_range' | null {
  const s = raw.trim();
  if (s === '') return null;
  if (!s.startsWith('#')) {
    for (const m of s.matchAll(ANY_NUM_RE)) {
      if (!(Math.abs(Number(m[1])) <= MAX_COMPONENT)) return 'out_of_range';
    }
  }
  if (/^lab\(/i.test(s)) {
    const c = parseLab(s);
    return c ? { color: c, format: 'lab' } : null;
  }
  // colord reads the CSS `device-cmyk()` spelling only; accept the common `cmyk()` too.
  const normalised = /^cmyk\(/i.test(s) ? `device-${s}` : s;
  const format = getFormat(normalised);
  if (format === undefined || !(FORMATS as readonly string[]).includes(format)) return null;
  const color = colord(normalised);
  if (!color.isValid()) return null;
  return { color, format: format as Format };
}

const round = (n: number, places: number) => {
  const f = 10 ** places;
  return Math.round(n * f) / f + 0; // + 0 turns -0 into 0
};

const WHITE = colord('#ffffff');
const BLACK = colord('#000000');

const Num = (description: string) => Type.Number({ description });

const Response = Type.Object({
  input: Type.String({ description: 'The color as given.' }),
  format_detected: Type.Union(FORMATS.map((f) => Type.Literal(f)), { description: 'The notation the input was read as.' }),
  hex: Type.String({ description: '#rrggbb (alpha dropped), lower case.' }),
  hex8: Type.String({ description: '#rrggbbaa, always eight digits.' }),
  alpha: Num('Opacity, 0..1.'),
  rgb: Type.Object({ r: Num('Red 0..255.'), g: Num('Green 0..255.'), b: Num('Blue 0..255.') }),
  hsl: Type.Object({ h: Num('Hue in degrees 0..360.'), s: Num('Saturation %.'), l: Num('Lightness %.') }),
  hsv: Type.Object({ h: Num('Hue in degrees.'), s: Num('Saturation %.'), v: Num('Value %.') }),
  hwb: Type.Object({ h: Num('Hue in degrees.'), w: Num('Whiteness %.'), b: Num('Blackness %.') }),
  cmyk: Type.Object({ c: Num('Cyan %.'), m: Num('Magenta %.'), y: Num('Yellow %.'), k: Num('Key (black) %.') }),
  lab: Type.Object({ l: Num('CIE L* 0..100.'), a: Num('CIE a*.'), b: Num('CIE b*.') }, { description: 'CIELAB (D50).' }),
  lch: Type.Object({ l: Num('Lightness 0..100.'), c: Num('Chroma.'), h: Num('Hue in degrees.') }, { description: 'CIELCH (D50).' }),
  oklab: Type.Object({ l: Num('Lightness 0..1.'), a: Num('a.'), b: Num('b.') }),
  oklch: Type.Object({ l: Num('Lightness 0..1.'), c: Num('Chroma.'), h: Num('Hue in degrees.') }),
  css: Type.Object({
    hex: Type.String(), rgb: Type.String(), hsl: Type.String(), hwb: Type.String(), lab: Type.String(),
    lch: Type.String(), oklab: Type.String(), oklch: Type.String(), cmyk: Type.String({ description: 'device-cmyk() notation.' }),
  }, { description: 'Ready-to-paste CSS strings (alpha included when below 1).' }),
  name: Type.Union([Type.String(), Type.Null()], { description: 'The CSS named color with exactly this value, or null.' }),
  closest_name: Type.String({ description: 'The nearest CSS named color (alpha ignored).' }),
  luminance: Num('WCAG relative luminance 0..1 (2 decimals).'),
  is_dark: Type.Boolean({ description: 'Perceived brightness below 0.5.' }),
  contrast: Type.Object({
    against_white: Num('WCAG contrast ratio with #ffffff, 1..21 (rounded down to 2 decimals).'),
    against_black: Num('WCAG contrast ratio with #000000, 1..21 (rounded down to 2 decimals).'),
  }, { description: 'Alpha is ignored.' }),
  best_text_color: Type.Union([Type.Literal('#000000'), Type.Literal('#ffffff')], {
    description: 'Black or white, whichever contrasts more with this color as a background.',
  }),
});

const example = {
  input: 'rebeccapurple',
  format_detected: 'name' as const,
  hex: '#663399',
  hex8: '#663399ff',
  alpha: 1,
  rgb: { r: 102, g: 51, b: 153 },
  hsl: { h: 270, s: 50, l: 40 },
  name: 'rebeccapurple',
  contrast: { against_white: 8.4, against_black: 2.49 },
};

export default defineTool({
  name: 'tool-color-converter',
  slug: 'color-converter',
  summary: 'Convert a CSS color between hex, RGB, HSL, HSV, HWB, CMYK, LAB, LCH and OKLab/OKLCH, with name and contrast.',
  description:
    'Reads any CSS color (#rgb, #rgba, #rrggbb, #rrggbbaa, rgb()/rgba(), hsl()/hsla(), hwb(), lab(), lch(), oklab(), oklch(), ' +
    'cmyk()/device-cmyk() or a CSS color name, case-insensitive) and answers it in every model, with the exact and closest CSS name, ' +
    'WCAG relative luminance and contrast against white and black. Channel values are rounded as colord rounds them ' +
    '(rgb/hsl/hsv/hwb/cmyk to integers, lab/lch to 2 decimals). Out-of-gamut values are clamped as CSS does.',
  request: StrictObject({
    color: Type.String({ minLength: 1, maxLength: 256, description: 'A CSS color, e.g. "#663399", "rgb(102 51 153 / 50%)", "hsl(270, 50%, 40%)", "rebeccapurple".' }),
  }),
  response: Response,
  example: { request: { color: 'rebeccapurple' }, response: example },
  run({ color: raw }) {
    const parsed = parse(raw);
    if (parsed === 'out_of_range') invalid('color', `has a component beyond ${MAX_COMPONENT} in magnitude; no CSS color needs one`);
    if (!parsed) {
      invalid('color', 'is not a recognised CSS color (try #rrggbb, rgb(), hsl(), hwb(), lab(), lch(), oklab(), oklch(), cmyk() or a CSS color name)');
    }
    const { color: c, format } = parsed;
    const { r, g, b, a } = c.toRgb();
    if (![r, g, b, a].every(Number.isFinite)) invalid('color', 'does not describe a representable color');

    const opaque = c.alpha(1);
    const hex = opaque.toHex();
    const hex8 = a < 1 ? c.toHex() : `${hex}ff`;
    const hsl = c.toHsl();
    const hsv = c.toHsv();
    const hwb = c.toHwb();
    const cmyk = c.toCmyk();
    const lab = c.toLab();
    const lch = c.toLch();
    const oklab = c.toOklab();
    const oklch = c.toOklch();
    const alphaSuffix = a < 1 ? ` / ${a}` : '';
    const againstWhite = opaque.contrast(WHITE);
    const againstBlack = opaque.contrast(BLACK);

    return {
      input: raw,
      format_detected: format,
      hex,
      hex8,
      alpha: a,
      rgb: { r, g, b },
      hsl: { h: hsl.h, s: hsl.s, l: hsl.l },
      hsv: { h: hsv.h, s: hsv.s, v: hsv.v },
      hwb: { h: hwb.h, w: hwb.w, b: hwb.b },
      cmyk: { c: cmyk.c, m: cmyk.m, y: cmyk.y, k: cmyk.k },
      lab: { l: lab.l, a: lab.a, b: lab.b },
      lch: { l: lch.l, c: lch.c, h: lch.h },
      oklab: { l: oklab.l, a: oklab.a, b: oklab.b },
      oklch: { l: oklch.l, c: oklch.c, h: oklch.h },
      css: {
        hex: a < 1 ? hex8 : hex,
        rgb: c.toRgbString(),
        hsl: c.toHslString(),
        hwb: c.toHwbString(),
        lab: `lab(${round(lab.l, 2)}% ${round(lab.a, 2)} ${round(lab.b, 2)}${alphaSuffix})`,
        lch: c.toLchString(),
        oklab: c.toOklabString(),
        oklch: c.toOklchString(),
        cmyk: c.toCmykString(),
      },
      name: c.toName() ?? null,
      closest_name: opaque.toName({ closest: true }) ?? 'black',
      luminance: opaque.luminance(),
      is_dark: opaque.isDark(),
      contrast: { against_white: againstWhite, against_black: againstBlack },
      best_text_color: againstBlack >= againstWhite ? ('#000000' as const) : ('#ffffff' as const),
    };
  },
});
