/**
 * regex-tester: run a JavaScript regular expression over a text and list
 * the matches (groups, named groups, indices with the d flag), optionally
 * with the result of a replacement. Evaluation runs in a worker thread with a
 * deadline, so catastrophic backtracking costs one worker restart and a 400,
 * never a stuck server.
 */
import { defineTool, errorSpec, StrictObject, Type, invalid } from '../../sdk/index.js';
import { RegexWorkerPool } from './pool.js';
import { MAX_MATCH_TEXT, MAX_REPLACED } from './worker.js';

const DEFAULT_FLAGS = 'g';
const DEFAULT_MAX_MATCHES = 100;
const DEFAULT_TIMEOUT_MS = 250;

const pool = new RegexWorkerPool({ size: 2, maxQueue: 256 });

const request = StrictObject({
  pattern: Type.String({
    maxLength: 2000,
    description: 'The regular expression source, JavaScript (ECMAScript) syntax, without surrounding slashes.',
  }),
  flags: Type.Optional(Type.String({
    maxLength: 8,
    pattern: '^[dgimsuvy]*$',
    default: DEFAULT_FLAGS,
    description: 'Flags, each at most once: d (indices), g (all matches), i, m, s, u, v (not with u), y (sticky). Without g only the first match is found.',
  })),
  input: Type.String({ maxLength: 100_000, description: 'The text to search.' }),
  max_matches: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: DEFAULT_MAX_MATCHES,
    description: 'Most matches listed in `matches` (match_count still counts them all).',
  })),
  replacement: Type.Optional(Type.String({
    maxLength: 10_000,
    description: 'When present, also answer `replaced`: input.replace(regex, replacement), with $1, $<name>, $&, $` and $\' references.',
  })),
  timeout_ms: Type.Optional(Type.Integer({
    minimum: 10,
    maximum: 1000,
    default: DEFAULT_TIMEOUT_MS,
    description: 'Evaluation deadline in milliseconds; a pattern that runs longer (catastrophic backtracking) is refused with 400.',
  })),
});

const Span = Type.Tuple([Type.Integer(), Type.Integer()], { description: '[start, end) in UTF-16 code units.' });
const NullableString = Type.Union([Type.String(), Type.Null()]);
const NullableSpan = Type.Union([Span, Type.Null()]);

const Match = Type.Object({
  match: Type.String({ description: 'The matched text.' }),
  index: Type.Integer({ description: 'Start offset in the input, in UTF-16 code units (JavaScript string indices).' }),
  end: Type.Integer({ description: 'End offset (exclusive), in UTF-16 code units.' }),
  groups: Type.Array(NullableString, { description: 'Capture groups 1..n in order; null for a group that did not take part in the match.' }),
  named_groups: Type.Union([Type.Record(Type.String(), NullableString), Type.Null()], {
    description: 'Named groups by name (null values for groups that did not take part); null when the pattern has no named groups.',
  }),
  indices: Type.Optional(Type.Object({
    match: Span,
    groups: Type.Array(NullableSpan),
    named_groups: Type.Union([Type.Record(Type.String(), NullableSpan), Type.Null()]),
  }, { description: 'Only with the d flag: the [start, end) of the match and of each group.' })),
});

const response = Type.Object({
  flags: Type.String({ description: 'The flags used, in canonical order.' }),
  match_count: Type.Integer({ description: 'Number of matches in the whole input (1 at most without the g flag).' }),
  truncated: Type.Boolean({ description: 'True when `matches` lists fewer than match_count (max_matches reached, or 500,000 characters of matched text listed).' }),
  matches: Type.Array(Match),
  replaced: Type.Optional(Type.String({ description: 'The input with the replacement applied (every match with g, else the first); only when `replacement` was given.' })),
  elapsed_ms: Type.Number({ description: 'Time the evaluation took in the worker, in milliseconds.' }),
});

function checkFlags(flags: string): void {
  const seen = new Set<string>();
  for (const f of flags) {
    if (!'dgimsuvy'.includes(f)) invalid('flags', `unknown flag '${f}': use only d, g, i, m, s, u, v, y`);
    if (seen.has(f)) invalid('flags', `flag '${f}' is given more than once`);
    seen.add(f);
  }
  if (seen.has('u') && seen.has('v')) invalid('flags', "flags 'u' and 'v' cannot be combined ('v' is the extended unicode mode)");
}

export default defineTool({
  name: 'tool-regex-tester',
  slug: 'regex-tester',
  errors: [errorSpec('ServiceUnavailable')],
  summary: 'Test a regular expression against a text: matches, groups, indices and replacement',
  description:
    'Runs a JavaScript (ECMAScript) regular expression over `input` and lists the matches with their offsets, capture groups and named groups ' +
    '(and group offsets with the d flag). With `replacement`, also answers the replaced text. Evaluation happens in a worker thread with a ' +
    `deadline (timeout_ms): a pattern that backtracks catastrophically is refused with 400 instead of hanging. At most ${MAX_MATCH_TEXT} characters ` +
    `of matched text are listed and the replaced text may be at most ${MAX_REPLACED} characters. Offsets are UTF-16 code units.`,
  request,
  response,
  example: {
    request: { pattern: '(?<user>[a-z]+)@(?<host>[a-z.]+)', flags: 'g', input: 'ann@example.com, bob@test.org', replacement: '$<user> at $<host>' },
    response: {
      flags: 'g',
      match_count: 2,
      truncated: false,
      matches: [
        { match: 'ann@example.com', index: 0, end: 15, groups: ['ann', 'example.com'], named_groups: { user: 'ann', host: 'example.com' } },
        { match: 'bob@test.org', index: 17, end: 29, groups: ['bob', 'test.org'], named_groups: { user: 'bob', host: 'test.org' } },
      ],
      replaced: 'ann at example.com, bob at test.org',
    },
  },
  start: () => pool.start(),
  stop: () => pool.stop(),
  async run(req, ctx) {
    const flags = req.flags ?? DEFAULT_FLAGS;
    checkFlags(flags);
    const job = {
      pattern: req.pattern,
      flags,
      input: req.input,
      maxMatches: req.max_matches ?? DEFAULT_MAX_MATCHES,
      ...(req.replacement !== undefined ? { replacement: req.replacement } : {}),
    };
    const result = await pool.run(job, req.timeout_ms ?? DEFAULT_TIMEOUT_MS, ctx.signal);
    return result;
  },
});
