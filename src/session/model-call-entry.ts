import type { Usage } from '../llm/message.js';
import type { ModelApi } from '../llm/model-request.js';
import { canonicalSettings } from '../llm/request-hash.js';
import type { AgentEvent } from '../machines/emitted-events.js';
import type { TranscriptEntry, TranscriptEntryInput } from './transcript.js';

/** The `event` name of the transcript entry written after each accepted model reply. */
export const MODEL_CALL_EVENT = 'model_call';

/**
 * The `data` of a `model_call` transcript entry: where the call was in the session, how it went, and
 * who answered. Written just before the reply's assistant message. `requestHash` is of the request as
 * sent, before the transcript's redaction (src/llm/request-hash.ts). Transcripts written before this
 * entry existed have none; readers take its absence as "not recorded".
 */
export interface ModelCallData {
  turn: number;
  iteration: number;
  /** The attempt answered, counted from 1. */
  attempt: number;
  wire: ModelApi;
  requestHash: string;
  responseId?: string;
  responseModel?: string;
  finishReason: string;
  usage: Usage | null;
  durationMs: number;
  firstChunkMs?: number;
}

/**
 * The transcript entry of a `model_call` event (the bus's fields `type`, `sessionId`, `timestamp` left
 * out, and the request's settings, which go in a `request_settings` entry when they change).
 */
export function modelCallEntry(event: AgentEvent<'model_call'>): TranscriptEntryInput {
  const { type: _type, sessionId: _session, timestamp, settings: _settings, ...data } = event;
  return { kind: 'event', event: MODEL_CALL_EVENT, at: new Date(timestamp).toISOString(), data };
}

/**
 * The `event` name of the entry a saved session writes before a `model_call` whose request settings
 * (`requestSettings`: model, tools, parameters; all but the conversation) differ from the last ones it
 * wrote: once at the first call, again only when they change.
 */
export const REQUEST_SETTINGS_EVENT = 'request_settings';

/** The `data` of a `request_settings` entry. */
export interface RequestSettingsData {
  wire: ModelApi;
  settings: Record<string, unknown>;
}

/** The data of a `request_settings` entry, checked, or why it is not one; `undefined` for other entries. */
export function requestSettingsOf(entry: TranscriptEntry): RequestSettingsData | string | undefined {
  if (entry.kind !== 'event' || entry.event !== REQUEST_SETTINGS_EVENT) return undefined;
  const data = entry.data as Record<string, unknown> | null | undefined;
  if (typeof data !== 'object' || data === null) return 'a request_settings entry without a data object';
  const settings = data.settings;
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings))
    return 'request_settings "settings" is not an object';
  if (data.wire !== 'chat-completions' && data.wire !== 'responses')
    return 'request_settings "wire" is not a known API';
  return data as unknown as RequestSettingsData;
}

/**
 * The data of a `model_call` entry, checked (a transcript file is hostile input), or the reason it is
 * not one. `undefined` for entries of any other kind.
 */
export function modelCallOf(entry: TranscriptEntry): ModelCallData | string | undefined {
  if (entry.kind !== 'event' || entry.event !== MODEL_CALL_EVENT) return undefined;
  const data = entry.data as Record<string, unknown> | null | undefined;
  if (typeof data !== 'object' || data === null) return 'a model_call entry without a data object';
  for (const key of ['turn', 'iteration', 'attempt', 'durationMs'] as const) {
    if (!Number.isSafeInteger(data[key]) || (data[key] as number) < 0)
      return `model_call "${key}" is not a count`;
  }
  if (data.wire !== 'chat-completions' && data.wire !== 'responses')
    return 'model_call "wire" is not a known API';
  if (typeof data.requestHash !== 'string') return 'model_call "requestHash" is not a string';
  if (typeof data.finishReason !== 'string') return 'model_call "finishReason" is not a string';
  return data as unknown as ModelCallData;
}

/**
 * The entries a saved session appends for each `model_call` event: the call's entry, preceded by a
 * `request_settings` entry when the request's settings differ from the last ones written.
 */
export class ModelCallEntries {
  /** Canonical JSON of the request settings last written. */
  #settingsWritten: string | undefined;
  /** The settings last compared: the next call's usually hold the very same values (one tools array). */
  #settingsSeen: Record<string, unknown> | undefined;

  for(event: AgentEvent<'model_call'>): TranscriptEntryInput[] {
    const entries = [modelCallEntry(event)];
    // The same values as the last call's (by identity: the registry hands out one tools array until
    // its tools change) are the same settings: no canonical JSON of them for every call.
    if (event.settings && sameValues(event.settings, this.#settingsSeen)) return entries;
    this.#settingsSeen = event.settings;
    const settings = event.settings && canonicalSettings(event.settings);
    if (settings !== undefined && settings !== this.#settingsWritten) {
      this.#settingsWritten = settings;
      const data = { wire: event.wire, settings: event.settings };
      entries.unshift({ kind: 'event', event: REQUEST_SETTINGS_EVENT, at: entries[0]!.at, data });
    }
    return entries;
  }
}

/** Whether two settings objects have the same keys with identical values. */
function sameValues(a: Record<string, unknown>, b: Record<string, unknown> | undefined): boolean {
  if (b === undefined) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
}
