/** Case table for the user-agent-parser tool: run in process (test/tools) and over both HTTP adapters (test/http). */
import { expect } from 'vitest';
import type { ToolCaseFile } from '../../support/tool-harness.js';

const CHROME_WIN10 = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1';
const SAFARI_IPAD =
  'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1';
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0';
const SAFARI_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15';
const CHROME_ANDROID = 'Mozilla/5.0 (Linux; Android 13; SM-S908B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36';
const EDGE_WIN = `${CHROME_WIN10} Edg/120.0.2210.91`;
const PS5 = 'Mozilla/5.0 (PlayStation; PlayStation 5/2.26) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.0 Safari/605.1.15';
const SAMSUNG_TV =
  'Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0.3809.146 TV Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const GOOGLEBOT_SMARTPHONE =
  'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.71 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const HEADLESS = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36';

const NOT_BOT = { is_bot: false, match: null, pattern: null };

export default {
  slug: 'user-agent-parser',
  cases: [
    {
      name: 'Chrome on Windows 10 (desktop, Blink)',
      body: { user_agent: CHROME_WIN10 },
      status: 200,
      check: (b) =>
        expect(b).toEqual({
          user_agent: CHROME_WIN10,
          browser: { name: 'Chrome', version: '120.0.0.0', major: '120' },
          engine: { name: 'Blink', version: '120.0.0.0' },
          os: { name: 'Windows', version: '10' },
          device: { type: 'desktop', vendor: null, model: null },
          cpu: { architecture: 'amd64' },
          bot: NOT_BOT,
        }),
    },
    {
      name: 'Safari on iPhone (mobile, WebKit)',
      body: { user_agent: SAFARI_IPHONE },
      status: 200,
      check: (b) =>
        expect(b).toEqual({
          user_agent: SAFARI_IPHONE,
          browser: { name: 'Mobile Safari', version: '17.2', major: '17' },
          engine: { name: 'WebKit', version: '605.1.15' },
          os: { name: 'iOS', version: '17.2' },
          device: { type: 'mobile', vendor: 'Apple', model: 'iPhone' },
          cpu: { architecture: null },
          bot: NOT_BOT,
        }),
    },
    {
      name: 'Safari on iPad (tablet)',
      body: { user_agent: SAFARI_IPAD },
      status: 200,
      check: (b) => {
        expect(b.device).toEqual({ type: 'tablet', vendor: 'Apple', model: 'iPad' });
        expect(b.os).toEqual({ name: 'iOS', version: '16.6' });
        expect(b.browser).toEqual({ name: 'Mobile Safari', version: '16.6', major: '16' });
      },
    },
    {
      name: 'Firefox on Linux (desktop, Gecko, OS version unknown)',
      body: { user_agent: FIREFOX_LINUX },
      status: 200,
      check: (b) =>
        expect(b).toEqual({
          user_agent: FIREFOX_LINUX,
          browser: { name: 'Firefox', version: '121.0', major: '121' },
          engine: { name: 'Gecko', version: '121.0' },
          os: { name: 'Linux', version: null },
          device: { type: 'desktop', vendor: null, model: null },
          cpu: { architecture: 'amd64' },
          bot: NOT_BOT,
        }),
    },
    {
      name: 'Safari on macOS (desktop, vendor Apple)',
      body: { user_agent: SAFARI_MAC },
      status: 200,
      check: (b) => {
        expect(b.browser).toEqual({ name: 'Safari', version: '17.2', major: '17' });
        expect(b.os).toEqual({ name: 'Mac OS', version: '10.15.7' });
        expect(b.device).toEqual({ type: 'desktop', vendor: 'Apple', model: 'Macintosh' });
      },
    },
    {
      name: 'Chrome on a Samsung phone',
      body: { user_agent: CHROME_ANDROID },
      status: 200,
      check: (b) => {
        expect(b.os).toEqual({ name: 'Android', version: '13' });
        expect(b.device).toEqual({ type: 'mobile', vendor: 'Samsung', model: 'SM-S908B' });
        expect(b.engine.name).toBe('Blink');
      },
    },
    {
      name: 'Edge on Windows',
      body: { user_agent: EDGE_WIN },
      status: 200,
      check: (b) => {
        expect(b.browser).toEqual({ name: 'Edge', version: '120.0.2210.91', major: '120' });
        expect(b.device.type).toBe('desktop');
      },
    },
    {
      name: 'PlayStation 5 (console)',
      body: { user_agent: PS5 },
      status: 200,
      check: (b) => {
        expect(b.device).toEqual({ type: 'console', vendor: 'Sony', model: 'PlayStation 5' });
        expect(b.os).toEqual({ name: 'PlayStation', version: '5' });
      },
    },
    {
      name: 'Samsung smart TV',
      body: { user_agent: SAMSUNG_TV },
      status: 200,
      check: (b) => {
        expect(b.device).toEqual({ type: 'smarttv', vendor: 'Samsung', model: null });
        expect(b.browser.name).toBe('Samsung Internet');
      },
    },
    {
      name: 'Googlebot (bot)',
      body: { user_agent: GOOGLEBOT },
      status: 200,
      check: (b) =>
        expect(b).toEqual({
          user_agent: GOOGLEBOT,
          browser: { name: null, version: null, major: null },
          engine: { name: null, version: null },
          os: { name: null, version: null },
          device: { type: 'bot', vendor: null, model: null },
          cpu: { architecture: null },
          bot: { is_bot: true, match: 'Google', pattern: '(?<! channel/|google/)google(?!(?:wv|app|/google| pixel))' },
        }),
    },
    {
      name: 'Googlebot smartphone: bot wins over the phone it imitates',
      body: { user_agent: GOOGLEBOT_SMARTPHONE },
      status: 200,
      check: (b) => {
        expect(b.device.type).toBe('bot');
        expect(b.bot.is_bot).toBe(true);
        expect(b.os).toEqual({ name: 'Android', version: '6.0.1' });
      },
    },
    {
      name: 'curl is a bot for isbot',
      body: { user_agent: 'curl/8.5.0' },
      status: 200,
      check: (b) => {
        expect(b.bot.is_bot).toBe(true);
        expect(b.bot.match).toBe('curl/8.5.0');
        expect(typeof b.bot.pattern).toBe('string');
        expect(b.device).toEqual({ type: 'bot', vendor: null, model: null });
        expect(b.browser).toEqual({ name: null, version: null, major: null });
      },
    },
    {
      name: 'headless Chrome is a bot',
      body: { user_agent: HEADLESS },
      status: 200,
      check: (b) => {
        expect(b.bot).toEqual({ is_bot: true, match: 'Headless', pattern: 'headless' });
        expect(b.browser.name).toBe('Chrome Headless');
        expect(b.device.type).toBe('bot');
      },
    },
    {
      name: 'every key present and null (not missing) when unknown',
      body: { user_agent: 'Mozilla/5.0 (Unknown; rv:1) Something' },
      status: 200,
      check: (b) => {
        expect(Object.keys(b).sort()).toEqual(['bot', 'browser', 'cpu', 'device', 'engine', 'os', 'user_agent']);
        expect(Object.keys(b.browser).sort()).toEqual(['major', 'name', 'version']);
        expect(Object.keys(b.device).sort()).toEqual(['model', 'type', 'vendor']);
        expect(b.cpu).toEqual({ architecture: null });
        expect(JSON.stringify(b)).not.toContain('undefined');
      },
    },
    {
      name: 'control characters, NUL and emoji are parsed, not refused',
      body: { user_agent: 'Mozilla/5.0 \u0000\r\n \u{1F600} \ud800' },
      status: 200,
      check: (b) => expect(b.user_agent).toBe('Mozilla/5.0 \u0000\r\n \u{1F600} \ud800'),
    },
    {
      name: 'exactly 4096 characters is accepted',
      body: { user_agent: `${CHROME_WIN10} ${'x'.repeat(4096 - CHROME_WIN10.length - 1)}` },
      status: 200,
      check: (b) => expect(b.user_agent.length).toBe(4096),
    },

    // ---- hostile ----
    { name: 'empty string', body: { user_agent: '' }, status: 400, fields: ['user_agent'] },
    { name: 'whitespace only', body: { user_agent: '  \t ' }, status: 400, fields: ['user_agent'] },
    { name: '4097 characters', body: { user_agent: 'a'.repeat(4097) }, status: 400, fields: ['user_agent'] },
    { name: '5000 characters', body: { user_agent: 'Mozilla/5.0 '.repeat(417) }, status: 400, fields: ['user_agent'] },
    { name: 'missing field', body: {}, status: 400, fields: ['user_agent'] },
    { name: 'null', body: { user_agent: null }, status: 400, fields: ['user_agent'] },
    { name: 'number', body: { user_agent: 42 }, status: 400, fields: ['user_agent'] },
    { name: 'array', body: { user_agent: [CHROME_WIN10] }, status: 400, fields: ['user_agent'] },
    { name: 'object', body: { user_agent: { ua: CHROME_WIN10 } }, status: 400, fields: ['user_agent'] },
    { name: 'extra field', body: { user_agent: CHROME_WIN10, verbose: true }, status: 400, fields: ['verbose'] },
    { name: 'misspelt field', body: { userAgent: CHROME_WIN10 }, status: 400, fields: ['user_agent', 'userAgent'] },
  ],
} satisfies ToolCaseFile;
