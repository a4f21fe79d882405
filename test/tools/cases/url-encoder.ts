/** Case table for the url-encoder tool: run in process (test/tools) and over both HTTP adapters (test/http). */
import { expect } from 'vitest';
import type { ToolCaseFile } from '../../support/tool-harness.js';

const message = (b: any, text: string) => expect(b.validation_errors[0].message).toContain(text);

export default {
  slug: 'url-encoder',
  cases: [
    // --- encode ---
    {
      name: 'encode a component (default)',
      body: { input: 'a b&c=d/é' },
      status: 200,
      check: (b) => expect(b).toEqual({ output: 'a%20b%26c%3Dd%2F%C3%A9' }),
    },
    {
      name: 'component keeps only unreserved marks',
      body: { input: "-_.!~*'()?#[]+%" },
      status: 200,
      check: (b) => expect(b.output).toBe("-_.!~*'()%3F%23%5B%5D%2B%25"),
    },
    {
      name: 'encode an astral character as four UTF-8 bytes',
      body: { input: '😀', action: 'encode' },
      status: 200,
      check: (b) => expect(b.output).toBe('%F0%9F%98%80'),
    },
    {
      name: 'encode a whole URI keeps its syntax',
      body: { input: 'https://example.com/a b?q=é&x=1#f', mode: 'uri' },
      status: 200,
      check: (b) => expect(b.output).toBe('https://example.com/a%20b?q=%C3%A9&x=1#f'),
    },
    {
      name: 'encode form data: space is +, only *-._ kept (WHATWG urlencoded serializer)',
      body: { input: "a b&c=d/é*~-._!'()", mode: 'form' },
      status: 200,
      check: (b) => expect(b.output).toBe('a+b%26c%3Dd%2F%C3%A9*%7E-._%21%27%28%29'),
    },
    {
      name: 'encode control characters and NUL',
      body: { input: '\u0000\n\t' },
      status: 200,
      check: (b) => expect(b.output).toBe('%00%0A%09'),
    },
    {
      name: 'encode empty text',
      body: { input: '' },
      status: 200,
      check: (b) => expect(b).toEqual({ output: '' }),
    },

    // --- decode ---
    {
      name: 'decode a component',
      body: { input: 'a%20b%26c%3Dd%2F%C3%A9+', action: 'decode' },
      status: 200,
      check: (b) => expect(b.output).toBe('a b&c=d/é+'),
    },
    {
      name: 'decode lowercase hex and astral characters',
      body: { input: '%f0%9f%98%80', action: 'decode' },
      status: 200,
      check: (b) => expect(b.output).toBe('😀'),
    },
    {
      name: 'decode a URI keeps reserved escapes',
      body: { input: 'a%2Fb%20c%3F', action: 'decode', mode: 'uri' },
      status: 200,
      check: (b) => expect(b.output).toBe('a%2Fb c%3F'),
    },
    {
      name: 'decode form data: + is a space, %2B a plus',
      body: { input: 'a+b%2Bc%3D', action: 'decode', mode: 'form' },
      status: 200,
      check: (b) => expect(b.output).toBe('a b+c='),
    },
    {
      name: 'decode %00 to a NUL character',
      body: { input: 'x%00y', action: 'decode' },
      status: 200,
      check: (b) => expect(b.output).toBe('x\u0000y'),
    },

    // --- parse ---
    {
      name: 'parse a URL into its parts; repeated query keys survive',
      body: { input: 'https://user:pw@Example.COM:8443/a/../b%20c?x=1&y=%C3%A9+z&x=2#frag', action: 'parse' },
      status: 200,
      check: (b) => expect(b).toEqual({
        output: 'https://user:pw@example.com:8443/b%20c?x=1&y=%C3%A9+z&x=2#frag',
        parts: {
          href: 'https://user:pw@example.com:8443/b%20c?x=1&y=%C3%A9+z&x=2#frag',
          protocol: 'https:',
          username: 'user',
          password: 'pw',
          host: 'example.com:8443',
          hostname: 'example.com',
          port: '8443',
          pathname: '/b%20c',
          search: '?x=1&y=%C3%A9+z&x=2',
          hash: '#frag',
          origin: 'https://example.com:8443',
          query: [['x', '1'], ['y', 'é z'], ['x', '2']],
        },
      }),
    },
    {
      name: 'parse drops the default port',
      body: { input: 'http://example.com:80/', action: 'parse' },
      status: 200,
      check: (b) => {
        expect(b.parts.port).toBe('');
        expect(b.parts.host).toBe('example.com');
      },
    },
    {
      name: 'parse an IPv6 host',
      body: { input: 'http://[::1]:8080/', action: 'parse' },
      status: 200,
      check: (b) => expect(b.parts).toMatchObject({ hostname: '[::1]', port: '8080', origin: 'http://[::1]:8080' }),
    },
    {
      name: 'parse an internationalised domain (punycode)',
      body: { input: 'https://münchen.de/ä', action: 'parse' },
      status: 200,
      check: (b) => {
        expect(b.parts.hostname).toBe('xn--mnchen-3ya.de');
        expect(b.parts.pathname).toBe('/%C3%A4');
      },
    },
    {
      name: 'parse an opaque URL (mailto) has origin "null"',
      body: { input: 'mailto:someone@example.com?subject=hi', action: 'parse' },
      status: 200,
      check: (b) => expect(b.parts).toMatchObject({ protocol: 'mailto:', pathname: 'someone@example.com', origin: 'null', query: [['subject', 'hi']] }),
    },

    // --- 400s ---
    { name: 'missing input', body: {}, status: 400, fields: ['input'] },
    { name: 'input not a string', body: { input: ['a'] }, status: 400, fields: ['input'] },
    { name: 'unknown action', body: { input: 'a', action: 'escape' }, status: 400, fields: ['action'] },
    { name: 'unknown mode', body: { input: 'a', mode: 'path' }, status: 400, fields: ['mode'] },
    { name: 'unknown field', body: { input: 'a', plus_for_space: true }, status: 400, fields: ['plus_for_space'] },
    { name: 'input over 262144 characters', body: { input: 'a'.repeat(262_145) }, status: 400, fields: ['input'] },
    {
      name: 'decode a lone %',
      body: { input: '100%', action: 'decode' },
      status: 400,
      fields: ['input'],
      check: (b) => message(b, 'position 3'),
    },
    { name: 'decode %zz', body: { input: 'a%zzb', action: 'decode' }, status: 400, fields: ['input'] },
    { name: 'decode %2 at the end', body: { input: 'a%2', action: 'decode', mode: 'uri' }, status: 400, fields: ['input'] },
    { name: 'decode form with a malformed sequence', body: { input: 'a+%G1', action: 'decode', mode: 'form' }, status: 400, fields: ['input'] },
    {
      name: 'decode bytes that are not UTF-8',
      body: { input: 'x%FFy', action: 'decode' },
      status: 400,
      fields: ['input'],
      check: (b) => message(b, 'not valid UTF-8'),
    },
    { name: 'decode a truncated UTF-8 sequence', body: { input: '%E2%82', action: 'decode' }, status: 400, fields: ['input'] },
    { name: 'decode an encoded lone surrogate (CESU)', body: { input: '%ED%A0%80', action: 'decode' }, status: 400, fields: ['input'] },
    {
      name: 'encode a lone surrogate (component) is a 400, not a URIError',
      body: { input: 'a\ud800' },
      status: 400,
      fields: ['input'],
      check: (b) => message(b, 'lone surrogate'),
    },
    { name: 'encode a lone low surrogate (uri)', body: { input: '\udc00b', mode: 'uri' }, status: 400, fields: ['input'] },
    { name: 'encode a lone surrogate (form)', body: { input: 'x\ud83d', mode: 'form' }, status: 400, fields: ['input'] },
    {
      name: 'encoded output over the cap',
      body: { input: '€'.repeat(200_000) },
      status: 400,
      fields: ['input'],
      check: (b) => message(b, '1048576'),
    },
    { name: 'parse text that is not a URL', body: { input: 'not a url', action: 'parse' }, status: 400, fields: ['input'] },
    { name: 'parse a relative URL', body: { input: '/path?x=1', action: 'parse' }, status: 400, fields: ['input'] },
    { name: 'parse an empty string', body: { input: '', action: 'parse' }, status: 400, fields: ['input'] },
    { name: 'parse a URL with a bad port', body: { input: 'http://example.com:99999/', action: 'parse' }, status: 400, fields: ['input'] },
    { name: 'parse a URL with a bad IPv6 host', body: { input: 'http://[::1/', action: 'parse' }, status: 400, fields: ['input'] },
  ],
} satisfies ToolCaseFile;
