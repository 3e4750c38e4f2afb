import { type ParseArgsConfig, parseArgs } from 'node:util';

/**
 * A command line that cannot be run: a flag unknown or without its value, something required
 * missing. `main` prints `agentloop <cmd>: <message>; see agentloop <cmd> --help` and exits 2.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** `node:util`'s `parseArgs`, with its errors turned into a {@link UsageError} that names the flag. */
export function parseFlags<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw usageErrorOf(error) ?? error;
  }
}

/** The {@link UsageError} for an error `parseArgs` threw (undefined for any other error). */
export function usageErrorOf(error: unknown): UsageError | undefined {
  if (error instanceof UsageError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS_')) return undefined;
  const message = (error as Error).message;
  // parseArgs quotes the option as '--name' or '--name <value>', and a positional as 'text'.
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? '';
  const flag = quoted.split(' ')[0] ?? quoted;
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return new UsageError(`unknown flag ${flag}`);
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new UsageError(`unexpected argument "${quoted}"`);
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (/does not take an argument/.test(message)) return new UsageError(`${flag} takes no value`);
      return new UsageError(`${flag} needs a value`);
    default:
      return new UsageError(message.split('.')[0] ?? message);
  }
}

/** A flag's positive integer value (`fallback` without the flag). */
export function positiveInteger(text: string | undefined, flag: string, fallback: number): number {
  if (text === undefined) return fallback;
  const n = /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`${flag} needs a whole number above 0, got "${text}"`);
  return n;
}
