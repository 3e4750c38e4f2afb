import OpenAI from 'openai';
import type { ReplayLiveModel } from './replay-options.js';

/** The live model of a replay's continuation, checked: where it is and how to authenticate. */
interface LiveTarget {
  baseURL: string;
  apiKey: string;
  model: string | undefined;
}

/** The API the SDK talks to when no `baseURL` is given. */
const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/**
 * Checks `afterRecording` (a replay option: docs/evals.md, "Replay, then live"): a `baseURL` or an
 * `apiKey` is needed, each a non-empty string when given. Throws a `TypeError` naming the key.
 */
export function liveTarget(live: ReplayLiveModel): LiveTarget {
  for (const key of ['baseURL', 'apiKey', 'model'] as const) {
    const value = live[key];
    if (value !== undefined && (typeof value !== 'string' || value.trim() === '')) {
      throw new TypeError(`replaySession: afterRecording.${key} must be a non-empty string`);
    }
  }
  if (live.baseURL === undefined && live.apiKey === undefined) {
    throw new TypeError('replaySession: afterRecording needs a baseURL or an apiKey (the live model)');
  }
  return {
    baseURL: (live.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, ''),
    apiKey: live.apiKey ?? 'not-needed',
    model: live.model,
  };
}

/**
 * The SDK client of a replay that goes on live: its requests go to the replay's server while
 * `goesLive()` is false, and from the first one it is true to the live model instead (the same path
 * under the live `baseURL`, the live key, and with `model` set to the live model when one is given).
 * Both parts therefore run through one agent and one real SDK client, so the conversation, the tools
 * and the turn in progress carry over without a hand-over.
 */
export function routedClient(replayURL: string, live: LiveTarget, goesLive: () => boolean): OpenAI {
  const routed = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    if (!goesLive()) return fetch(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const target = url.startsWith(replayURL) ? live.baseURL + url.slice(replayURL.length) : url;
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${live.apiKey}`);
    let body = init?.body;
    if (live.model !== undefined && typeof body === 'string') {
      body = JSON.stringify({ ...(JSON.parse(body) as Record<string, unknown>), model: live.model });
      headers.delete('content-length');
    }
    return fetch(target, { ...init, headers, ...(body !== undefined ? { body } : {}) });
  };
  return new OpenAI({ baseURL: replayURL, apiKey: 'agentloop-replay', maxRetries: 0, fetch: routed });
}
