/**
 * Phone numbers for the contacts extractor: the default region, tel: links,
 * structured values, and numbers in running text.
 *
 * Parsing and validation are libphonenumber-js's with its `max` metadata:
 * measured on the test table, `min` (lengths and leading digits only)
 * accepts dates (15.03.2024 as a German number), German ZIP codes, prices
 * (1.234.567) and ISBNs as valid numbers, and finds no valid number `max`
 * misses. The extra ~70 kB of metadata is the price of precision.
 *
 * Text is not handed to libphonenumber whole: a linear pass picks out runs
 * of digits and separators (7 to 17 digits), and only those windows are
 * searched, under a page budget, so a hostile page (a megabyte of "1 1 1")
 * costs a bounded number of parses. On each number found, the checks
 * libphonenumber's VALID leniency leaves out:
 * - national format (no + or 00) needs the region's national prefix when
 *   that number's format requires it (libphonenumber's stricter levels
 *   check this; 2024-03-15 is otherwise a valid number in Wuppertal);
 * - a bare digit run (no separators) in national format needs a phone
 *   label before it (order and customer numbers are bare digit runs);
 * - the nearest label before it decides: a phone label (Tel, Phone,
 *   Telefon, Téléphone, Teléfono, 電話, T:, M: ...) keeps it, a fax label
 *   drops it, and a label of another number kind (ISBN, order, invoice,
 *   IBAN, VAT, ZIP, PLZ, version, IP, 〒 ...) drops it; a label right after
 *   it ("202-628-8503 fax", "03-5809-2727 (代表)") counts too, unless it
 *   introduces the next number ("Tel 030 123 Fax 030 456");
 * - not part of a larger token (a digit, letter, or `.`/`,`/`/` plus digit
 *   glued on either side: IP addresses, versions, prices), not next to a
 *   currency, and not shaped like a date, an IP address or an ISBN.
 */
import {
  findPhoneNumbersInText, isSupportedCountry, Metadata, parseDigits, parsePhoneNumberFromString,
  type CountryCode, type PhoneNumber,
} from 'libphonenumber-js/max';

export interface ParsedPhone {
  /** E.164. */
  readonly e164: string;
  readonly national: string;
}

export interface PhoneHit extends ParsedPhone {
  readonly start: number;
  readonly end: number;
  /** A phone label precedes it. */
  readonly labelled: boolean;
  /** Written in international format (+CC or 00CC). */
  readonly international: boolean;
}

// ---------------------------------------------------------------- the default region

/** Two-letter domains sold as generic names, which say nothing about where a site is. */
const GENERIC_CCTLDS = new Set([
  'io', 'co', 'me', 'tv', 'ai', 'ly', 'fm', 'am', 'gg', 'to', 'cc', 'ws', 'nu', 'tk', 'ml', 'ga', 'cf', 'gq', 'so', 'sh', 'ac', 'sc',
  'vc', 'la',
]);

/**
 * The country most pages in a language come from: `lang="de"` with no
 * region suggests DE, `en` the US and `pt` Brazil. A wrong guess mostly
 * costs recall, not precision: another country's national numbers rarely
 * validate in the guessed region's plan (020 7946 0958 is no NANP number).
 */
const LANGUAGE_REGION: Readonly<Record<string, string>> = {
  en: 'US', pt: 'BR', de: 'DE', fr: 'FR', ja: 'JP', it: 'IT', es: 'ES', nl: 'NL', pl: 'PL', sv: 'SE', da: 'DK', fi: 'FI', nb: 'NO', nn: 'NO', no: 'NO',
  cs: 'CZ', sk: 'SK', ko: 'KR', ru: 'RU', tr: 'TR', el: 'GR', hu: 'HU', he: 'IL', uk: 'UA', ro: 'RO', hi: 'IN', bg: 'BG', hr: 'HR',
  sl: 'SI', lt: 'LT', lv: 'LV', et: 'EE', th: 'TH', vi: 'VN', id: 'ID', ms: 'MY',
};

const asCountry = (code: string | undefined): CountryCode | undefined => {
  if (code === undefined) return undefined;
  const c = code.trim().toUpperCase();
  const mapped = c === 'UK' ? 'GB' : c;
  return /^[A-Z]{2}$/.test(mapped) && isSupportedCountry(mapped) ? mapped : undefined;
};

/** The region subtag of a BCP 47 tag or a locale (de-DE, fr_FR, zh-Hant-TW). */
const regionOf = (tag: string | undefined): CountryCode | undefined => {
  if (tag === undefined) return undefined;
  const m = /^[a-z]{2,3}(?:[-_][a-z]{4})?[-_]([a-z]{2})(?![a-z0-9])/i.exec(tag.trim());
  return m === null ? undefined : asCountry(m[1]);
};

export interface RegionSignals {
  /** The request's country (always wins when it is a supported region). */
  readonly explicit?: string | undefined;
  readonly htmlLang?: string | undefined;
  readonly contentLanguage?: string | undefined;
  readonly ogLocale?: string | undefined;
  readonly host?: string | undefined;
}

/**
 * The region national-format numbers are read in: the request's country,
 * else the region of the page's language (html lang, Content-Language),
 * else of og:locale, else the host's country-code TLD (not the ones sold as
 * generic names, like .io or .co), else the country most pages in the
 * page's language come from (`lang="ja"` -> JP, `en` -> US). Undefined:
 * only international-format numbers are found.
 */
export function defaultRegion(s: RegionSignals): CountryCode | undefined {
  const explicit = asCountry(s.explicit);
  if (explicit !== undefined) return explicit;
  const fromTag = regionOf(s.htmlLang) ?? regionOf(s.contentLanguage) ?? regionOf(s.ogLocale);
  if (fromTag !== undefined) return fromTag;
  const tld = s.host?.toLowerCase().replace(/\.$/, '').split('.').pop();
  if (tld !== undefined && /^[a-z]{2}$/.test(tld) && !GENERIC_CCTLDS.has(tld)) {
    const c = asCountry(tld);
    if (c !== undefined) return c;
  }
  for (const tag of [s.htmlLang, s.contentLanguage, s.ogLocale]) {
    const lang = tag?.trim().toLowerCase().split(/[-_]/)[0];
    if (lang !== undefined && LANGUAGE_REGION[lang] !== undefined) return LANGUAGE_REGION[lang] as CountryCode;
  }
  return undefined;
}

// ---------------------------------------------------------------- single values (tel:, schema.org, hCard)

/** Structured values are trusted but must be well-formed: valid, or at least a possible number. */
export function parsePhoneValue(value: string, region: CountryCode | undefined): (ParsedPhone & { valid: boolean }) | undefined {
  const v = value.length > 200 ? value.slice(0, 200) : value;
  let p: PhoneNumber | undefined;
  try {
    p = parsePhoneNumberFromString(v, region === undefined ? {} : { defaultCountry: region });
  } catch {
    return undefined;
  }
  if (p === undefined || !p.isPossible()) return undefined;
  return { e164: p.number, national: p.formatNational(), valid: p.isValid() };
}

/** The number of a tel: (or callto:) URL: %-escapes decoded, parameters (;ext=, ;phone-context=) dropped. */
export function telNumber(href: string): string | undefined {
  const m = /^\s*(?:tel|callto):(?:\/\/)?([^;?#]*)/i.exec(href);
  if (m === null) return undefined;
  let s = m[1]!;
  try {
    s = decodeURIComponent(s);
  } catch {
    // Keep it as written.
  }
  return s.trim() === '' ? undefined : s;
}

// ---------------------------------------------------------------- the national prefix rule

interface FormatInternals {
  pattern(): string;
  leadingDigitsPatterns(): string[];
  nationalPrefixIsMandatoryWhenFormattingInNationalFormat(): boolean;
}
interface PlanInternals {
  formats(): FormatInternals[];
  nationalPrefix(): string | undefined;
}

const planCache = new Map<string, { prefix: string | undefined; formats: { leading: RegExp | undefined; pattern: RegExp; mandatory: boolean }[] } | null>();

/** A country's formats, from libphonenumber's metadata (the parts its EXACT_GROUPING leniency reads). */
function planOf(country: string): ReturnType<typeof planCache.get> {
  if (planCache.has(country)) return planCache.get(country);
  let plan: ReturnType<typeof planCache.get> = null;
  try {
    const md = new Metadata() as unknown as { selectNumberingPlan(c: string): void; numberingPlan?: PlanInternals };
    md.selectNumberingPlan(country);
    const np = md.numberingPlan;
    if (np !== undefined && typeof np.formats === 'function') {
      plan = {
        prefix: np.nationalPrefix() || undefined,
        formats: np.formats().map((f) => {
          const leading = f.leadingDigitsPatterns();
          return {
            leading: leading.length > 0 ? new RegExp(`^(?:${leading[leading.length - 1]})`) : undefined,
            pattern: new RegExp(`^(?:${f.pattern()})$`),
            mandatory: f.nationalPrefixIsMandatoryWhenFormattingInNationalFormat(),
          };
        }),
      };
    }
  } catch {
    plan = null;
  }
  planCache.set(country, plan);
  return plan;
}

/** Whether a number written in national format carries the national prefix its format requires (0 30 ... in DE; none in US). */
function nationalPrefixOk(p: PhoneNumber, writtenDigits: string): boolean {
  const country = p.country;
  if (country === undefined) return true;
  const plan = planOf(country);
  if (plan === null || plan === undefined || plan.prefix === undefined) return true;
  const nn = p.nationalNumber as string;
  const format = plan.formats.find((f) => (f.leading === undefined || f.leading.test(nn)) && f.pattern.test(nn));
  if (format === undefined || !format.mandatory) return true;
  return writtenDigits.startsWith(plan.prefix);
}

// ---------------------------------------------------------------- numbers in text

/** A label names the kind of number that follows it. Bounded repeats only. */
const PHONE_LABEL = new RegExp(
  [
    '(?<![\\p{L}\\p{N}])(?:',
    'tel|tél|tele?fon|tele?fone|tel[eé]fono|t[ée]l[ée]phone|telephone|phone|ph|fon|call|mobile?|mobil|m[óo]vil|cell|cellular|cellphone|',
    'portable|handy|gsm|hotline|whatsapp|telefonnummer|rufnummer|festnetz|zentrale|switchboard|appel(?:ez)?|llame|llamar|ligue|celular|',
    'contato|contacto|num[ée]ro|n[úu]mero|電話(?:番号)?|携帯(?:電話)?|代表',
    ')(?:\\s{0,2}[-.]{0,2}\\s{0,2}(?:no|nr|number|nummer|num|n°|nº)\\.?)?(?![\\p{L}])',
    '|[☎📞✆]',
    // T: / M: / P: in signatures (case-insensitive like the rest).
    '|(?<![\\p{L}\\p{N}])[TMP](?=[\\s:.])',
  ].join(''),
  'giu',
);
const FAX_LABEL = /(?<![\p{L}\p{N}])(?<!(?:tel|phone|fon)\.?\s{0,2}[/&+]\s{0,2})(?:fax|telefax|t[ée]l[ée]copie|ファックス|ＦＡＸ|传真|傳真|F(?=[\s:.]))/giu;
const OTHER_LABEL = new RegExp(
  [
    '(?<![\\p{L}\\p{N}])(?:isbn(?:-1[03])?|issn|ean|gtin|upc|sku|art(?:ikel)?(?:-?nr)?|orders?|bestell\\p{L}*|auftrag\\p{L}*|rechnung\\p{L}*|',
    'invoice|commande|pedido|factura|facture|ref(?:erence|erencia)?|réf(?:érence)?|iban|bic|swift|vat|ust\\p{L}*|tax|steuer\\p{L}*|',
    'siret|siren|tva|nif|cif|cnpj|cpf|gstin|abn|acn|hrb|hra|handelsregister|registernummer|amtsgericht|kundennummer|kunden-?nr|',
    'customer\\s{0,2}(?:no|number|id)|account|konto|blz|zip|plz|postcode|postal|cep|version|serial|model|modell|tracking|',
    'sendungsnummer|ticket|patent|doi|pmid|imei|vin|',
    'item|product|produkt|id|ip|lot|batch|isin|wkn|注文|番号|郵便番号',
    ')(?![\\p{L}])|[#№〒]',
  ].join(''),
  'giu',
);

const lastMatchEnd = (re: RegExp, s: string): number => {
  re.lastIndex = 0;
  let end = -1;
  for (let m = re.exec(s); m !== null; m = re.exec(s)) {
    end = m.index + m[0].length;
    if (m[0].length === 0) re.lastIndex++;
  }
  return end;
};

/** What the nearest label before a number says it is. */
function labelBefore(before: string): 'phone' | 'fax' | 'other' | undefined {
  const phone = lastMatchEnd(PHONE_LABEL, before);
  const fax = lastMatchEnd(FAX_LABEL, before);
  const other = lastMatchEnd(OTHER_LABEL, before);
  const best = Math.max(phone, fax, other);
  if (best < 0) return undefined;
  // Between the label and the number: at most two short words ("Telefon (Zentrale):"), or other numbers of a list
  // ("Tel: 030 123, 030 456") and nothing else.
  const between = before.slice(best);
  const words = between.match(/\p{L}+/gu) ?? [];
  if (words.length > 2 || words.join('').length > 16) return undefined;
  if (words.length > 0 && /\d/.test(between)) return undefined;
  if (phone === best) return 'phone';
  return fax === best ? 'fax' : 'other';
}

/** A label after a number, not one that introduces the next number ("Tel 030 123 Fax 030 456": Fax belongs to 456). */
const PHONE_AFTER = /^\s{0,2}[(\[【（]?\s{0,2}(?:tel|phone|telefon|téléphone|teléfono|mobile?|mobil|cell|office|main|代表|電話)(?![\p{L}])(?!\.?\s{0,2}[:：]?\s{0,3}[+(（\d])/iu;
const FAX_AFTER = /^\s{0,2}[(\[【（]?\s{0,2}(?:fax|telefax|télécopie|ファックス|ＦＡＸ)(?![\p{L}])(?!\.?\s{0,2}[:：]?\s{0,3}[+(（\d])/iu;

function labelAfter(after: string): 'phone' | 'fax' | undefined {
  if (FAX_AFTER.test(after)) return 'fax';
  return PHONE_AFTER.test(after) ? 'phone' : undefined;
}

const CURRENCY_BEFORE = /(?:[$€£¥₹₩₽¢₺₪]|R\$|US\$|A\$|C\$|USD|EUR|GBP|JPY|INR|BRL|AUD|CAD|CHF|Rs\.?)\s{0,2}$/;
const CURRENCY_AFTER = /^\s{0,2}(?:[$€£¥₹₩₽¢₺₪%‰円元]|USD|EUR|GBP|JPY|INR|BRL|AUD|CAD|CHF|kr|zł|Kč|Ft|lei)/;
const DATE_SHAPE = /^\d{1,4}[./-]\d{1,2}[./-]\d{1,4}$|^\d{4}[./-]\d{1,2}[./-]\d{1,2}(?!\d)/;
const IP_SHAPE = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/** Latin letters and digits: a number glued to one is part of a code. (CJK text writes numbers without spaces: 電話03-1234-5678まで.) */
const isWordChar = (ch: string): boolean => /[\p{Script=Latin}\p{N}]/u.test(ch);
const isDigit = (ch: string): boolean => /\p{Nd}/u.test(ch);

/** Full-width digits and separators (Japanese text) as ASCII, one character for one, so positions hold. */
const toHalfWidth = (s: string): string =>
  s.replace(/[\uFF01-\uFF5E]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xfee0)).replace(/[\u2010-\u2015\u2212]/g, '-').replace(/\u3000/g, ' ');

function rejectedByShape(raw: string, digits: string): boolean {
  if (DATE_SHAPE.test(raw) || IP_SHAPE.test(raw) || raw.includes(',')) return true;
  // ISBN-13 and ISBN-10 written with hyphens.
  if (/^97[89]/.test(digits) && digits.length === 13 && /-/.test(raw)) return true;
  if (/^\d{1,5}-\d{1,7}-\d{1,7}-[\dX]$/i.test(raw)) return true;
  return false;
}

function rejectedByNeighbours(text: string, start: number, end: number, international: boolean): boolean {
  const b1 = text.charAt(start - 1);
  const b2 = text.charAt(start - 2);
  const a1 = text.charAt(end);
  const a2 = text.charAt(end + 1);
  if (b1 !== '' && (isDigit(b1) || (!international && isWordChar(b1)))) return true;
  if ((b1 === '.' || b1 === ',' || b1 === '/' || b1 === '-' || b1 === ':') && isDigit(b2)) return true;
  if (b1 === '.' && isWordChar(b2) && /v(?:er)?$/i.test(text.slice(Math.max(0, start - 4), start - 1))) return true;
  if (a1 !== '' && isWordChar(a1) && !/^x\d/i.test(text.slice(end, end + 2))) return true;
  if ((a1 === '.' || a1 === ',' || a1 === '/' || a1 === '-' || a1 === ':') && isDigit(a2)) return true;
  if (CURRENCY_BEFORE.test(text.slice(Math.max(0, start - 6), start))) return true;
  if (CURRENCY_AFTER.test(text.slice(end, end + 6))) return true;
  return false;
}

/** Runs of digits and phone separators: 7+ digits, at most ~40 characters each. */
const CANDIDATE = /[+(]?\d(?:[\d \u00a0\t().\/-]|\u200b){5,40}\d\)?/g;

export interface PhoneBudget {
  /** Characters of text still to scan. */
  chars: number;
  /** libphonenumber searches still allowed. */
  parses: number;
  /** libphonenumber searches made (for the caller's accounting). */
  searches: number;
}

/**
 * Phone numbers in one text node. `before` is the text that precedes the
 * node on the page (its last few dozen characters), for labels like
 * `<dt>Telefon</dt><dd>030 ...</dd>`.
 */
export function scanPhones(text: string, before: string, region: CountryCode | undefined, budget: PhoneBudget): PhoneHit[] {
  if (budget.chars <= 0 || budget.parses <= 0) return [];
  const raw = text.length > budget.chars ? text.slice(0, budget.chars) : text;
  budget.chars -= raw.length;
  const t = toHalfWidth(raw);
  const out: PhoneHit[] = [];
  CANDIDATE.lastIndex = 0;
  for (let m = CANDIDATE.exec(t); m !== null; m = CANDIDATE.exec(t)) {
    const window = m[0];
    const groups = window.match(/\d+/g) ?? [];
    const windowDigits = groups.join('').length;
    if (windowDigits < 7) continue;
    // Digits spaced one by one ("1 1 1 1 1 1 1") are no phone format; they are slow to search.
    if (groups.length > 6 && windowDigits / groups.length < 1.5) continue;
    if (budget.parses-- <= 0) break;
    budget.searches++;
    let found;
    try {
      found = findPhoneNumbersInText(window, region === undefined ? { leniency: 'VALID', maxTries: 8 } as object : { defaultCountry: region, leniency: 'VALID', maxTries: 8 } as object);
    } catch {
      continue;
    }
    for (const f of found) {
      const start = m.index + f.startsAt;
      const end = m.index + f.endsAt;
      const written = t.slice(start, end).trim();
      const digits = parseDigits(written);
      if (digits.length < 7 || digits.length > 17) continue;
      const international = /^\+/.test(written) || /^(?:00|011)/.test(digits);
      if (rejectedByShape(written, digits) || rejectedByNeighbours(t, start, end, international)) continue;
      const context = (toHalfWidth(before) + ' ' + t.slice(Math.max(0, start - 60), start)).slice(-72);
      const label = labelBefore(context);
      if (label === 'fax' || label === 'other') continue;
      // A label after the number ("202-628-8500 tel | 202-628-8503 fax", "03-5809-2727 (代表)").
      const after = labelAfter(t.slice(end, end + 16));
      if (after === 'fax') continue;
      const labelled = label === 'phone' || after === 'phone';
      const p = f.number;
      if (!international) {
        if (!nationalPrefixOk(p, digits)) continue;
        if (/^\d+$/.test(written) && !labelled) continue;
      }
      out.push({ e164: p.number, national: p.formatNational(), start, end, labelled, international });
    }
  }
  return out;
}
