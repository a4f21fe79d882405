/**
 * The ISO 639-1 language codes (two letters, lower case), for checking the
 * search `language` field with a useful message instead of passing any two
 * letters on to the providers.
 */
const CODES =
  'aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee el en eo es et eu ' +
  'fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ' +
  'ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os ' +
  'pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ' +
  'ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu';

export const ISO_LANGUAGE_CODES: ReadonlySet<string> = new Set(CODES.split(' '));

/** Why `value` is not an ISO 639-1 code, or undefined when it is. */
export function languageProblem(value: string): string | undefined {
  if (ISO_LANGUAGE_CODES.has(value)) return undefined;
  const region = /^([A-Za-z]{2})[-_]([A-Za-z]{2})$/.exec(value);
  if (region && ISO_LANGUAGE_CODES.has(region[1]!.toLowerCase())) {
    return `must be an ISO 639-1 code without a region (write "${region[1]!.toLowerCase()}" and give the region as country: "${region[2]!.toUpperCase()}")`;
  }
  if (/^[A-Z]{2}$/.test(value) && ISO_LANGUAGE_CODES.has(value.toLowerCase())) return `must be lower case ("${value.toLowerCase()}")`;
  return value.length <= 12
    ? `${JSON.stringify(value)} is not an ISO 639-1 language code (two lower-case letters, such as en, de or zh)`
    : 'is not an ISO 639-1 language code (two lower-case letters, such as en, de or zh)';
}
