import { DEFAULTS } from '../defaults.js';
import { SCRIPTED_SERVER_API_KEY } from '../events/secret-shape.js';
import type { Scenario } from '../testing/scenario.js';
import { startScriptedServer } from '../testing/scripted-server.js';
import type { EvalModelSpec } from './eval-suite-schema.js';

/** The `createAgent` options that reach a live case's model, and how to let it go. */
export interface EvalModel {
  options: { baseURL?: string; apiKey?: string; model: string; api?: 'chat-completions' | 'responses' };
  /** One line saying which model answered (for reports). */
  description: string;
  close(): Promise<void>;
}

/**
 * The model a live case talks with: the scripted server on `scenario` when there is one (offline and
 * deterministic), else the real server the suite's `model` names (`baseUrl`, the key in `apiKeyEnv`)
 * or `OPENAI_BASE_URL` / `OPENAI_API_KEY`. Undefined when there is neither: the caller says what to set.
 */
export async function connectEvalModel(
  spec: Omit<EvalModelSpec, 'scenario'>,
  scenario: Scenario | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<EvalModel | undefined> {
  const api = spec.api ? { api: spec.api } : {};
  if (scenario) {
    const server = await startScriptedServer({ scenario, record: false });
    return {
      // A placeholder key (the scripted server checks none), never redacted as a secret.
      options: {
        baseURL: server.url,
        apiKey: SCRIPTED_SERVER_API_KEY,
        model: spec.name ?? 'scripted-model',
        ...api,
      },
      description: `the scripted server at ${server.url}`,
      close: () => server.close(),
    };
  }
  const apiKey = env[spec.apiKeyEnv ?? 'OPENAI_API_KEY'] || undefined;
  const baseURL = spec.baseUrl ?? (env.OPENAI_BASE_URL || undefined);
  if (!apiKey && !baseURL) return undefined;
  const model = spec.name ?? (env.OPENAI_MODEL || DEFAULTS.model);
  return {
    options: { ...(baseURL ? { baseURL } : {}), ...(apiKey ? { apiKey } : {}), model, ...api },
    description: `${model} at ${baseURL ?? 'api.openai.com'}`,
    close: async () => {},
  };
}
