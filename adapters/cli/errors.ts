/** The command line's two failures, by exit code. */

/** Wrong command line: exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The command was understood but refused (unknown account, bad value): exit code 1. */
export class CommandError extends Error {
  override readonly name = 'CommandError';
}
