/**
 * user-agent-parser: browser, engine, OS, device and CPU from a User-Agent
 * string (ua-parser-js v1, MIT) plus bot detection (isbot).
 */
import { isbot, isbotMatch, list as botPatterns } from 'isbot';
import UAParser from 'ua-parser-js';
import { defineTool, StrictObject, Type, invalid } from '../../sdk/index.js';

const MAX_UA = 4096;

/** Created once; setUA/getResult is synchronous, so one instance serves every request. */
const parser = new UAParser();
/** isbot's own isbotPattern compiles every list entry per call; compile them once. */
const compiledBotPatterns = botPatterns.map((source) => ({ source, re: new RegExp(source, 'i') }));

/**
 * OS names (as ua-parser-js v1 reports them) that mean a desktop or laptop
 * when the parser finds no device type. Mobile OSes (iOS, Android, ...) are
 * not here: a browser on them with no device type stays unknown (null).
 */
const DESKTOP_OS = new RegExp(
  '^(?:windows(?! (?:phone|mobile|iot))|mac ?os|chromium os|linux|[kxl]?ubuntu|debian|fedora|mint|arch|centos|gentoo|slackware|mandriva|' +
    '(?:open)?suse|red ?hat|manjaro|elementary os|deepin|pclinuxos|zenwalk|linpus|mageia|vectorlinux|sabayon|linspire|raspbian|' +
    'gnu|hurd|[a-z-]{0,5}bsd|dragonfly|(?:open)?solaris|haiku|unix|aix|hp-ux|beos|os/2|amigaos|morphos|openvms|serenityos|plan 9|minix|risc os)$',
  'i',
);

const DEVICE_TYPES = ['desktop', 'mobile', 'tablet', 'smarttv', 'console', 'wearable', 'embedded', 'xr', 'bot'] as const;
type DeviceType = (typeof DEVICE_TYPES)[number];

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const Str = (description: string) => Nullable(Type.String({ description }));

const request = StrictObject({
  user_agent: Type.String({ minLength: 1, maxLength: MAX_UA, description: `The User-Agent header value to parse (1..${MAX_UA} characters).` }),
});

const response = Type.Object({
  user_agent: Type.String({ description: 'The string that was parsed, as given.' }),
  browser: Type.Object({
    name: Str('Browser name, e.g. "Chrome", "Mobile Safari", "Firefox".'),
    version: Str('Full browser version.'),
    major: Str('Major browser version.'),
  }),
  engine: Type.Object({
    name: Str('Rendering engine, e.g. "Blink", "WebKit", "Gecko".'),
    version: Str('Engine version.'),
  }),
  os: Type.Object({
    name: Str('Operating system, e.g. "Windows", "iOS", "Mac OS", "Android", "Linux".'),
    version: Str('OS version.'),
  }),
  device: Type.Object({
    type: Type.Union([...DEVICE_TYPES.map((t) => Type.Literal(t)), Type.Null()], {
      description: "'bot' when is_bot; else the parser's type (mobile, tablet, smarttv, console, wearable, embedded, xr); else 'desktop' for a known browser on a desktop OS; else null.",
    }),
    vendor: Str('Device vendor, e.g. "Apple", "Samsung".'),
    model: Str('Device model, e.g. "iPhone", "SM-S908B".'),
  }),
  cpu: Type.Object({
    architecture: Str('CPU architecture, e.g. "amd64", "arm64".'),
  }),
  bot: Type.Object({
    is_bot: Type.Boolean({ description: 'True when the string matches a known crawler, tool or library (isbot).' }),
    match: Str('The part of the string that matched, e.g. "Googlebot" or "curl/8.5.0"; null when not a bot.'),
    pattern: Str("The isbot pattern that matched (a regular expression source); null when not a bot."),
  }),
});

const orNull = (v: string | undefined): string | null => (v === undefined || v === '' ? null : v);

const isDeviceType = (v: string): v is DeviceType => (DEVICE_TYPES as readonly string[]).includes(v);

export default defineTool({
  name: 'tool-user-agent-parser',
  slug: 'user-agent-parser',
  summary: 'Parse a User-Agent string: browser, engine, OS, device type, CPU and bot detection',
  description:
    'Parses a User-Agent header with ua-parser-js (v1) and checks it against the isbot crawler list. Unknown parts are null. ' +
    "device.type is 'bot' when isbot matches; otherwise the parser's device type; otherwise 'desktop' when a known browser runs on a " +
    'desktop OS (Windows, macOS, Linux, Chromium OS, BSD, ...), since desktop user agents carry no device marker; otherwise null.',
  request,
  response,
  example: {
    request: {
      user_agent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1',
    },
    response: {
      browser: { name: 'Mobile Safari', version: '17.2', major: '17' },
      engine: { name: 'WebKit', version: '605.1.15' },
      os: { name: 'iOS', version: '17.2' },
      device: { type: 'mobile', vendor: 'Apple', model: 'iPhone' },
      cpu: { architecture: null },
      bot: { is_bot: false, match: null, pattern: null },
    },
  },
  run({ user_agent }) {
    if (user_agent.trim() === '') invalid('user_agent', 'must contain a non-whitespace character');
    const r = parser.setUA(user_agent).getResult();
    const isBot = isbot(user_agent);

    const parsedType = orNull(r.device.type);
    let type: DeviceType | null = null;
    if (isBot) type = 'bot';
    else if (parsedType !== null && isDeviceType(parsedType)) type = parsedType;
    else if (parsedType === null && r.browser.name && r.os.name && DESKTOP_OS.test(r.os.name)) type = 'desktop';

    return {
      user_agent,
      browser: { name: orNull(r.browser.name), version: orNull(r.browser.version), major: orNull(r.browser.major) },
      engine: { name: orNull(r.engine.name), version: orNull(r.engine.version) },
      os: { name: orNull(r.os.name), version: orNull(r.os.version) },
      device: { type, vendor: orNull(r.device.vendor), model: orNull(r.device.model) },
      cpu: { architecture: orNull(r.cpu.architecture) },
      bot: {
        is_bot: isBot,
        match: isBot ? isbotMatch(user_agent) : null,
        pattern: isBot ? (compiledBotPatterns.find((p) => p.re.test(user_agent))?.source ?? null) : null,
      },
    };
  },
});
