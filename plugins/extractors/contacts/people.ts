/**
 * Who an address in running text belongs to: a person's name, job title
 * and company read from the lines around it (a signature block, a staff
 * card, "Press contact: Dana Reyes", "Dana Reyes, Head of PR - dana@...").
 *
 * Names are recognised by shape, not from a list of names: 2 to 4
 * capitalised words (particles like van, de, von, da allowed inside,
 * initials, hyphenated and O'/Mc forms), no digits, none of the words a
 * heading or a department uses (Contact, Team, Press, Service, Kontakt,
 * Équipe ...); a courtesy title (Mr, Ms, Herr, Frau, M., Mme, Sr., Sra.)
 * is dropped, an academic one (Dr., Prof.) kept. Japanese names: a family
 * and a given name separated by a space (山田 太郎), or any 2-6 kanji/kana
 * after an explicit label (担当: 山田太郎). Job titles and companies are
 * recognised by keywords in English, German, French, Spanish and Japanese
 * (Head, Director, Geschäftsführer, Responsable, Gerente, 部長 ...) and by
 * legal-form suffixes (Inc., GmbH, S.A., 株式会社 ...).
 */

export interface PersonGuess {
  name: string | null;
  job: string | null;
  company: string | null;
}

/** Courtesy titles, and the "By" of a byline, dropped before a name. */
const COURTESY = /^(?:mr|mrs|ms|miss|mx|herr|frau|m|mme|mlle|sr|sra|srta|don|doña|sig|sig\.ra|by|par|por|door)\.?$/i;
const ACADEMIC = /^(?:dr|prof|dipl|ing|mag)\.(?:-\p{L}+\.?)?$/iu;
const PARTICLES = new Set(['van', 'von', 'de', 'der', 'den', 'da', 'das', 'do', 'dos', 'del', 'della', 'di', 'du', 'la', 'le', 'y', 'e', 'bin', 'al', 'ten', 'ter', 'zu', 'vom', 'zum', 'st.']);

/** Words that make a capitalised line a heading, a department or a phrase rather than a name. */
const STOP_WORDS = new Set(
  (
    'contact contacts contactez contacto contactar kontakt kontaktieren us our your my the a an and or for of to with about home privacy policy terms ' +
    'email e-mail mail phone tel telephone telefon fax mobile call write send office offices team support sales service services press media ' +
    'department customer customers info information help desk center centre inquiries enquiries general hours opening open news blog shop ' +
    'store imprint impressum legal notice company group head manager director officer chief executive president founder editor ' +
    'unser unsere unser ihr ihre sie wir presse pressestelle kundenservice kundendienst redaktion verwaltung zentrale geschäftsstelle ' +
    'sekretariat allgemeine anfragen fragen hilfe vertrieb abteilung ansprechpartner ansprechpartnerin öffnungszeiten ' +
    'notre votre nos vos équipe service presse relations publiques société entreprise nous écrivez appelez horaires ' +
    'nuestro nuestra nuestros equipo atención cliente clientes oficina prensa empresa escríbenos llámanos horario ' +
    'dear hello hi thanks thank regards best sincerely cheers greetings mit freundlichen grüßen cordialement saludos atentamente ' +
    'monday tuesday wednesday thursday friday saturday sunday january february march april june july august september october ' +
    'november december street road avenue suite floor building box p.o. po new read more learn view click here download subscribe ' +
    'login sign register cart account search menu north south east west united states kingdom republic ' +
    // Imperatives that open a sentence before a name ("Reach Dana Reyes at ...").
    'reach write ask talk speak meet visit send please message text ping follow join schreiben rufen kontaktieren ' +
    'écrivez contactez appelez écrire escriba escribe llame llama contacte ' +
    // Calls to action and desks that link texts and labels are made of ("Submit Tips", "Site Feedback", "Toll Free").
    'submit tip tips feedback site toll free reprints reprint report request apply book buy subscribe download share give get ' +
    'advertise advertising careers jobs corrections newsletter partnerships business editorial newsroom main switchboard public file ' +
    'privacy permissions licensing syndication letters human resources relations care affairs investor investors partners ' +
    'community hr legal finance accounting billing operations events membership admissions webmaster postmaster'
  ).split(/\s+/),
);

const JA_DEPARTMENT = /[部課室係所社店局院会窓口センター課長様宛御中]/u;

/** The name in `s` when it is shaped like a person's name, else null. */
export function personName(s: string, opts: { labelled?: boolean } = {}): string | null {
  let t = s.replace(/[\s\u3000]+/g, ' ').trim().replace(/^[\s,;:|•·–—-]+|(?<![\s,;:|•·–—-])[\s,;:|•·–—-]+$/g, '');
  if (t.length < 2 || t.length > 60 || /[\d@/\\<>{}[\]=+_#%&*!?"]/.test(t)) return null;
  // Japanese: family and given name.
  if (/^[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}ー ]+$/u.test(t)) {
    const spaced = /^\p{sc=Han}{1,4} [\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}ー]{1,5}$/u.test(t);
    const compact = opts.labelled === true && /^[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}ー]{2,6}$/u.test(t);
    if ((spaced || compact) && !JA_DEPARTMENT.test(t)) return t;
    return null;
  }
  let tokens = t.split(' ');
  while (tokens.length > 0 && COURTESY.test(tokens[0]!)) tokens = tokens.slice(1);
  let academic = 0;
  while (academic < tokens.length && ACADEMIC.test(tokens[academic]!)) academic++;
  const core = tokens.slice(academic);
  if (core.length < 2 || core.length > 5) return null;
  let words = 0;
  for (let i = 0; i < core.length; i++) {
    const w = core[i]!;
    const lower = w.toLowerCase();
    if (STOP_WORDS.has(lower) || STOP_WORDS.has(lower.replace(/[.,]$/, ''))) return null;
    if (PARTICLES.has(lower) && w === lower) {
      if (i === 0 || i === core.length - 1) return null;
      continue;
    }
    if (/^\p{Lu}\.$/u.test(w)) {
      if (i === core.length - 1) return null;
      continue;
    }
    if (!/^(?:(?:Mc|Mac|O['’]|D['’]|d['’])?\p{Lu}[\p{Ll}\p{M}'’]+)(?:-\p{Lu}[\p{Ll}\p{M}'’]+)?$/u.test(w)) return null;
    words++;
  }
  if (words < 2 && !(words === 1 && core.length >= 2)) return null;
  if (isJobTitle(t) !== null || isCompany(t) !== null) return null;
  t = [...tokens.slice(0, academic), ...core].join(' ');
  return t;
}

const TITLE_LATIN = new RegExp(
  '(?<![\\p{L}])(?:' +
    [
      'ceo|cto|cfo|coo|cmo|cio|cpo|vp|svp|evp|founder|co-founder|cofounder|owner|partner|president|vice president|chair(?:man|woman|person)?|',
      'director|manager|head|lead|chief|officer|executive|editor(?:-in-chief)?|journalist|reporter|writer|engineer|developer|designer|',
      'architect|consultant|advisor|adviser|analyst|specialist|coordinator|assistant|associate|representative|spokesperson|spokesman|',
      'spokeswoman|secretary|treasurer|administrator|supervisor|principal|professor|lecturer|researcher|scientist|attorney|lawyer|counsel|',
      'agent|broker|recruiter|intern|communications|public relations|',
      'geschäftsführer(?:in)?|geschäftsführung|leiter(?:in)?|leitung|pressesprecher(?:in)?|sprecher(?:in)?|inhaber(?:in)?|referent(?:in)?|',
      'vorstand|vorsitzende[rn]?|prokurist(?:in)?|sachbearbeiter(?:in)?|redakteur(?:in)?|berater(?:in)?|assistent(?:in)?|',
      'directeur|directrice|responsable|chargée?|gérante?|présidente?|fondat(?:eur|rice)|attachée? de presse|rédact(?:eur|rice)|',
      'conseill(?:er|ère)|ingénieur|',
      'director(?:a)?|gerente|jef[ea]|presidente|fundador(?:a)?|portavoz|coordinador(?:a)?|encargad[oa]|asesor(?:a)?|ingenier[oa]',
    ].join('') +
    ')(?![\\p{L}])',
  'iu',
);
const TITLE_JA = /代表取締役|取締役|社長|部長|課長|係長|室長|主任|マネージャー|ディレクター|広報|担当/u;

/** The line as a job title when it reads like one (a title keyword, short, no contact data). */
export function isJobTitle(line: string): string | null {
  const t = line.replace(/\s+/g, ' ').trim().replace(/^[\s,;:|•·–—-]+|(?<![\s,;:|•·–—-])[\s,;:|•·–—-]+$/g, '');
  if (t.length < 2 || t.length > 70 || t.includes('@') || (t.match(/\d/g) ?? []).length > 2) return null;
  if (!TITLE_LATIN.test(t) && !TITLE_JA.test(t)) return null;
  if (COMPANY_RE.test(t)) return null;
  return t;
}

const COMPANY_RE =
  /(?<![\p{L}])(?:Inc\.?|LLC|L\.L\.C\.|Ltd\.?|Limited|PLC|plc|Corp\.?|Corporation|GmbH|gGmbH|AG|KG|KGaA|OHG|UG|e\.\s?V\.|SE|S\.A\.|SA|SAS|SARL|S\.L\.|S\.p\.A\.|SpA|Srl|S\.r\.l\.|B\.V\.|BV|N\.V\.|NV|Pty|Pvt|Ltda\.?|LLP|AB|A\/S|ApS|Oy|K\.K\.)(?![\p{L}])|株式会社|有限会社|合同会社|（株）|\(株\)/u;
const COMPANY_LABEL = /^(?:company|organi[sz]ation|employer|firma|unternehmen|société|entreprise|empresa|compañía|会社名?|社名)\s*[:：]\s*/iu;

/** The line as a company name when it carries a legal form (Acme Inc., Muster GmbH, 株式会社サンプル) or a "Company:" label. */
export function isCompany(line: string): string | null {
  let t = line
    .replace(/\s+/g, ' ')
    .replace(/(?:copyright|©|\(c\))\s*(?:\d{4}(?:\s*[-–]\s*\d{4})?)?/gi, ' ')
    .replace(/(?<![\s,])[\s,]+all rights reserved\.?/i, '')
    .trim();
  const labelled = COMPANY_LABEL.exec(t);
  if (labelled !== null) t = t.slice(labelled[0].length);
  t = t.replace(/^[\s,;:|•·–—-]+|(?<![\s,;:|–—-])[\s,;:|–—-]+$/g, '');
  if (t.length < 2 || t.length > 80 || t.includes('@') || (t.match(/\d/g) ?? []).length > 4) return null;
  if (labelled !== null) return t;
  if (!COMPANY_RE.test(t)) return null;
  // The stretch that carries the legal form ("Acme Corp. | 5th Avenue" -> "Acme Corp.";
  // "Mortons Media Group Ltd, Media Centre, Horncastle" -> "Mortons Media Group Ltd"; "Dow Jones & Company, Inc.").
  const parts = t.split(/\s*(?:[|•·–—,;]|\s-\s)\s*/).filter((p) => p !== '');
  const i = parts.findIndex((p) => COMPANY_RE.test(p));
  if (i < 0) return t;
  const bare = COMPANY_RE.exec(parts[i]!)?.[0] === parts[i]!.trim();
  return bare && i > 0 ? `${parts[i - 1]}, ${parts[i]}` : parts[i]!.trim();
}

/** "Press contact: Dana Reyes", "Ansprechpartnerin: Dr. Anna Schmidt", "担当：山田太郎", "Geschäftsführer: Max Weber". */
const NAME_LABEL =
  /(?:^|[\s(|•·,;])((?:press|media|sales|marketing|customer|pr|your|our)?\s?contact(?:\s?person)?|ansprechpartner(?:in)?|pressekontakt|kontakt(?:person)?|contact\s(?:presse|média)|interlocut(?:eur|rice)|contacto(?:\s(?:de\s)?prensa)?|persona\sde\scontacto|responsable|担当者?|広報担当|name|nom|nombre|nome|氏名|名前|author|autor|auteur|verantwortlich|v\.i\.s\.d\.p\.?|inhaber(?:in)?|geschäftsführer(?:in)?|geschäftsführung|managing\sdirector|ceo|founder|owner|directeur|directrice|director(?:a)?|gerente|代表(?:取締役)?|社長)(?:\s?\([^)]{0,30}\))?\s?[:：]\s?/giu;
const JOB_LABELS = /^(?:inhaber(?:in)?|geschäftsführer(?:in)?|geschäftsführung|managing\sdirector|ceo|founder|owner|directeur|directrice|director(?:a)?|gerente|代表(?:取締役)?|社長)$/iu;

/** Separators between the parts of "Name, Title | Company - address". */
const PART_SEPARATORS = /\s*(?:[,;|•·–—\t(<>)（）、，；｜・]|\s-\s|\s\/\s)\s*/;
/** Labels that introduce the address itself ("E-Mail:", "Tel.:") at the end of a prefix. */
const TRAILING_FIELD_LABEL =
  /(?:^|[\s,;|•·–—(-])(?:e-?mail|mail|courriel|correo(?:\selectrónico)?|メール|tel\.?|phone|telefon|téléphone|teléfono|mobile?|fax|write\sto|schreiben\ssie|écrire\sà|escríbenos\sa|at|or|oder|ou|o|unter|à|a)\s?[:：.]?\s*$/iu;

const PART_SCAN = 400;

/**
 * The parts of a line, from at most PART_SCAN characters of it: its start
 * (the parts read are the first few), or with `fromEnd` its end (the parts
 * just before an address). The separators' white space backtracks
 * quadratically on a long run, so the scan is bounded (test/security/redos.test.ts).
 */
function splitParts(s: string, fromEnd = false): string[] {
  const scanned = s.length <= PART_SCAN ? s : fromEnd ? s.slice(-PART_SCAN) : s.slice(0, PART_SCAN);
  return scanned.split(PART_SEPARATORS).map((p) => p.trim()).filter((p) => p !== '');
}

/** The name (and what follows it) in a label pattern on the line, if any. */
function fromLabel(line: string, guess: PersonGuess): boolean {
  NAME_LABEL.lastIndex = 0;
  let found = false;
  for (let m = NAME_LABEL.exec(line); m !== null && !found; m = NAME_LABEL.exec(line)) {
    const rest = line.slice(m.index + m[0].length);
    const parts = splitParts(rest);
    if (parts.length === 0) continue;
    const name = personName(parts[0]!, { labelled: true }) ?? personName(parts[0]!.split(/(?<!\s)\s+(?=\S+@)/)[0]!, { labelled: true });
    if (name === null) continue;
    guess.name ??= name;
    const label = m[1]!.trim();
    if (JOB_LABELS.test(label)) guess.job ??= label.charAt(0).toUpperCase() + label.slice(1);
    restParts(parts.slice(1), guess);
    found = true;
  }
  return found;
}

/** Title and company among the parts after a name. */
function restParts(parts: readonly string[], guess: PersonGuess): void {
  for (const p of parts.slice(0, 3)) {
    if (p.includes('@') || /\d{3}/.test(p)) break;
    const company = isCompany(p);
    if (company !== null) guess.company ??= company;
    else {
      const job = isJobTitle(p);
      if (job !== null) guess.job ??= job;
    }
  }
}

/** A line with a name first ("Dana Reyes, Head of PR"), read into the guess. */
function fromNameLine(line: string, guess: PersonGuess): boolean {
  const parts = splitParts(line);
  if (parts.length === 0) return false;
  const name = personName(parts[0]!);
  if (name === null) return false;
  guess.name ??= name;
  restParts(parts.slice(1), guess);
  return true;
}

const looksLikeContactData = (line: string): boolean => line.includes('@') || /\d(?:[\s().\/-]?\d){5}/.test(line);

/**
 * The person around an address at column `col` of line `at` of a unit's
 * rendered lines. `sameLine`: the unit holds other people's addresses too,
 * so only the address's own line is read.
 */
export function guessPerson(lines: readonly string[], at: number, col: number, sameLine: boolean): PersonGuess {
  const guess: PersonGuess = { name: null, job: null, company: null };
  const line = lines[at] ?? '';
  // The same line, before the address.
  let prefix = line.slice(0, Math.max(0, col));
  for (let i = 0; i < 3; i++) {
    const stripped = prefix.replace(TRAILING_FIELD_LABEL, '').replace(/(?<![\s,;:|•·–—(<-])[\s,;:|•·–—(<-]+$/, '');
    if (stripped === prefix) break;
    prefix = stripped;
  }
  if (fromLabel(line.slice(0, Math.max(0, col)), guess)) return withCompanyAround(lines, at, sameLine, guess);
  if (prefix !== '') {
    const parts = splitParts(prefix, true);
    // The nearest name-shaped part before the address ("Sales: Dana Reyes - dana@..."; "Dana Reyes, Head of PR, dana@...").
    for (let i = parts.length - 1; i >= 0 && i >= parts.length - 3; i--) {
      const name = trailingName(parts[i]!.replace(/^.*[:：]\s*/, ''));
      if (name !== null) {
        guess.name = name;
        restParts(parts.slice(i + 1), guess);
        break;
      }
    }
    if (guess.name !== null) return withCompanyAround(lines, at, sameLine, guess);
  }
  if (sameLine) return guess;
  // The lines above, nearest first, up to the name: a signature block or a card.
  let unknown = 0;
  let nameLine = -1;
  for (let k = at - 1; k >= 0 && k >= at - 6; k--) {
    const l = lines[k]!.trim();
    if (l === '') continue;
    if (fromLabel(l, guess) || fromNameLine(l, guess)) {
      nameLine = k;
      break;
    }
    if (looksLikeContactData(l)) continue;
    const company = isCompany(l);
    if (company !== null) {
      guess.company ??= company;
      continue;
    }
    const job = isJobTitle(l);
    if (job !== null) {
      guess.job ??= job;
      continue;
    }
    if (++unknown >= 2) break;
  }
  // A company heading the block ("Acme GmbH / Geschäftsführer: Max Weber / ...").
  for (let k = nameLine - 1; guess.company === null && nameLine > 0 && k >= 0 && k >= nameLine - 2; k--) {
    const l = lines[k]!.trim();
    if (l !== '') guess.company = isCompany(l);
  }
  return withCompanyAround(lines, at, sameLine, guess);
}

/** A name at the end of a stretch of text ("Reach Dana Reyes"): the whole, else its last 4, 3 or 2 words. */
function trailingName(s: string): string | null {
  const whole = personName(s);
  if (whole !== null) return whole;
  const tokens = s.trim().split(/\s+/);
  for (let n = Math.min(4, tokens.length - 1); n >= 2; n--) {
    const name = personName(tokens.slice(-n).join(' '));
    if (name !== null) return name;
  }
  return null;
}

/** A company line just below the address ("dana@acme.com / Acme Corp."), when none was found above. */
function withCompanyAround(lines: readonly string[], at: number, sameLine: boolean, guess: PersonGuess): PersonGuess {
  if (guess.company !== null || sameLine) return guess;
  for (let k = at + 1; k < lines.length && k <= at + 3; k++) {
    const l = lines[k]!.trim();
    if (l === '' || looksLikeContactData(l)) continue;
    const company = isCompany(l);
    if (company !== null) {
      guess.company = company;
      break;
    }
  }
  return guess;
}
