import { DEFAULTS } from '../../defaults.js';
import { SCRIPTED_SERVER_API_KEY } from '../../events/secret-shape.js';
import type { Scenario } from '../../testing/scenario.js';
import { type ScriptedServer, startScriptedServer } from '../../testing/scripted-server.js';
import { UsageError } from '../cli-args.js';
import { loadScenarioFile, type ScriptedModel } from './scripted-model.js';

/** The `parseArgs` options of the model flags, shared by `run` and `chat`. */
export const MODEL_FLAG_OPTIONS = {
  'base-url': { type: 'string' },
  model: { type: 'string' },
  'api-key': { type: 'string' },
  scenario: { type: 'string' },
  api: { type: 'string' },
} as const;

/** The model flags out of parsed `MODEL_FLAG_OPTIONS` values. */
export function modelFlags(values: {
  'base-url'?: string | undefined;
  model?: string | undefined;
  'api-key'?: string | undefined;
  scenario?: string | undefined;
  api?: string | undefined;
}): ModelFlags {
  const api = values.api;
  if (api !== undefined && api !== 'chat-completions' && api !== 'responses') {
    throw new UsageError(`--api must be chat-completions or responses, not "${api}"`);
  }
  return {
    baseUrl: values['base-url'],
    apiKey: values['api-key'],
    model: values.model,
    scenario: values.scenario,
    api,
  };
}

/** The model flags every command shares. */
export interface ModelFlags {
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  model?: string | undefined;
  /** A scenario file (or `script: <name>`): run on the built-in scripted server. */
  scenario?: string | undefined;
  /** The API the server is spoken to with (default `chat-completions`). */
  api?: 'chat-completions' | 'responses' | undefined;
}

/** Where the agent's model lives, and how to shut it down. */
export interface ModelConnection {
  baseURL: string | undefined;
  apiKey: string | undefined;
  model: string;
  api: 'chat-completions' | 'responses' | undefined;
  /** Set when the built-in scripted server answers. */
  scripted: ScriptedServer | undefined;
  /** One line for the user saying which model answers. */
  description: string;
  close(): Promise<void>;
}

/** The `createAgent` options that reach the connection's model. */
export function modelOptions(connection: ModelConnection): {
  baseURL?: string;
  apiKey?: string;
  model: string;
  api?: 'chat-completions' | 'responses';
} {
  return {
    ...(connection.baseURL !== undefined ? { baseURL: connection.baseURL } : {}),
    ...(connection.apiKey !== undefined ? { apiKey: connection.apiKey } : {}),
    model: connection.model,
    ...(connection.api !== undefined ? { api: connection.api } : {}),
  };
}

/**
 * Picks the model: `--scenario` runs the scripted server on that file; `--base-url`/`--api-key` or
 * `OPENAI_BASE_URL`/`OPENAI_API_KEY` reach a real server; otherwise `fallback` (a demo's scenario, or
 * the scripted demo a bundle ships) runs on the scripted server, and without one it is an error
 * saying what to set. `description` says which of these answers.
 */
export async function connectModel(
  flags: ModelFlags,
  fallback?: Scenario | ScriptedModel,
): Promise<ModelConnection> {
  const env = process.env;
  if (flags.scenario !== undefined) {
    const file = flags.scenario;
    return startScripted(
      await loadScenarioFile(file),
      flags,
      (url) => `scenario ${file} on the scripted server at ${url}`,
    );
  }
  if (!hasRealModel(flags)) {
    if (fallback && 'source' in fallback) {
      return startScripted(
        fallback.scenario,
        flags,
        (url) => `${fallback.source} at ${url}; set OPENAI_API_KEY for a real model`,
      );
    }
    if (fallback) {
      return startScripted(fallback, flags, (url) => `scripted model at ${url} (no OPENAI_API_KEY set)`);
    }
    throw new Error(
      'no model: set OPENAI_API_KEY (or pass --api-key / --base-url), pass --scenario <file> to answer from the ' +
        'scripted server, or ship the agent a scripted demo in its bundle (scenarios/<agent>.yaml)',
    );
  }
  const baseURL = flags.baseUrl ?? env.OPENAI_BASE_URL;
  const model = flags.model ?? env.OPENAI_MODEL ?? DEFAULTS.model;
  return {
    baseURL,
    apiKey: flags.apiKey ?? env.OPENAI_API_KEY,
    model,
    api: flags.api,
    scripted: undefined,
    description: `${model} at ${baseURL ?? 'api.openai.com'}`,
    close: async () => {},
  };
}

async function startScripted(
  scenario: Scenario,
  flags: ModelFlags,
  describe: (url: string) => string,
): Promise<ModelConnection> {
  const scripted = await startScriptedServer({ scenario });
  return {
    baseURL: scripted.url,
    // A placeholder (the scripted server checks no key), never redacted as a secret.
    apiKey: SCRIPTED_SERVER_API_KEY,
    model: flags.model ?? 'scripted-model',
    api: flags.api,
    scripted,
    description: describe(scripted.url),
    close: () => scripted.close(),
  };
}

function hasRealModel(flags: ModelFlags): boolean {
  return Boolean(flags.baseUrl || flags.apiKey || process.env.OPENAI_API_KEY || process.env.OPENAI_BASE_URL);
}
