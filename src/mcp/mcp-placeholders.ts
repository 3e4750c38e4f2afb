import { McpConfigError } from './mcp-config-error.js';

/** The environment placeholders are filled from. */
export type PlaceholderEnv = Readonly<Record<string, string | undefined>>;

const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * `text` with each `${VAR}` replaced by the variable's value and each `${VAR:-default}` by the value,
 * or `default` when the variable is unset or empty (as a shell does). A variable that is unset without
 * a default throws a {@link McpConfigError} naming `at` (the server and key) and the variable.
 */
export function fillPlaceholders(text: string, env: PlaceholderEnv, at: string): string {
  if (!text.includes('${')) return text;
  return text.replace(PLACEHOLDER, (_whole, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    if (value === '') return value;
    throw new McpConfigError(
      `${at}: the environment variable "${name}" is not set (set it, or write \${${name}:-default})`,
    );
  });
}

/** The keys whose strings are filled: `command`, `args`, `env`, `url`, `headers` (values, not names). */
export function fillServerPlaceholders(
  entry: Record<string, unknown>,
  env: PlaceholderEnv,
  at: string,
): Record<string, unknown> {
  const out = { ...entry };
  for (const key of ['command', 'url'] as const) {
    if (typeof out[key] === 'string') out[key] = fillPlaceholders(out[key], env, `${at}.${key}`);
  }
  if (Array.isArray(out.args)) {
    out.args = out.args.map((arg, i) =>
      typeof arg === 'string' ? fillPlaceholders(arg, env, `${at}.args[${i}]`) : arg,
    );
  }
  for (const key of ['env', 'headers'] as const) {
    const record = out[key];
    if (typeof record !== 'object' || record === null || Array.isArray(record)) continue;
    out[key] = Object.fromEntries(
      Object.entries(record).map(([name, value]) => [
        name,
        typeof value === 'string' ? fillPlaceholders(value, env, `${at}.${key}.${name}`) : value,
      ]),
    );
  }
  return out;
}
