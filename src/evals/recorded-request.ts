import type { Message } from '../llm/message.js';
import { requestHash, requestSettings } from '../llm/request-hash.js';
import { toInputItems } from '../llm/responses-request.js';
import type { RecordedCall } from './cassette.js';
import { firstDifference, type JsonDifference } from './json-difference.js';

/** Fields named first when two requests are compared: what people change most. */
const FIELD_ORDER = ['model', 'tools', 'tool_choice', 'response_format', 'instructions'];

/** How a request differs from the recorded one, as far as the recording tells. */
export interface RequestDifference {
  /** The first differing JSON path; absent when the recording lacks what it would need to name it. */
  difference?: JsonDifference;
  /** True when the recorded side was rebuilt and does not hash to the recorded hash. */
  approximate: boolean;
}

/**
 * Compares a request as sent with the recorded one. The recording holds the request's hash, not its
 * body: the settings (model, tools, parameters) come from the `request_settings` entry in force, the
 * conversation from the transcript's messages before the reply. The settings are compared first,
 * then the conversation (Chat Completions' `messages`, or the Responses API's `input` items).
 */
export function requestDifference(
  call: RecordedCall,
  conversation: readonly unknown[],
  body: Record<string, unknown>,
): RequestDifference {
  const actualSettings = requestSettings(body);
  const recordedSettings = call.settings?.settings;
  if (recordedSettings) {
    const difference = firstDifference(recordedSettings, actualSettings, FIELD_ORDER);
    if (difference) return { difference, approximate: false };
  }
  // The Responses API sends the conversation as input items: rebuilt the way its wire makes them.
  const field = Array.isArray(body.input) || call.record?.wire === 'responses' ? 'input' : 'messages';
  let recorded: unknown = conversation;
  if (field === 'input') {
    try {
      recorded = toInputItems(conversation as Message[]);
    } catch {
      return { approximate: true };
    }
  }
  const rebuilt = { ...(recordedSettings ?? actualSettings), [field]: recorded };
  const approximate = !recordedSettings || requestHash(rebuilt) !== call.record?.requestHash;
  const difference = firstDifference(recorded, body[field], [], field);
  return difference ? { difference, approximate } : { approximate };
}

/** A value as a diff line shows it: JSON, cut to `max` characters; `(absent)` for undefined. */
export function shownValue(value: unknown, max = 160): string {
  if (value === undefined) return '(absent)';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
