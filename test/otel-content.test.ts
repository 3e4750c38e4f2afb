import { describe, expect, it } from 'vitest';
import { capturedJson, captureFromEnv } from '../src/otel/content-capture.js';

const same = <T>(value: T) => value;

describe('agentloop/otel content capture', () => {
  it('is off unless asked: the option wins, else OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true', () => {
    expect(captureFromEnv(undefined, {})).toBe(false);
    expect(captureFromEnv(undefined, { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'TRUE ' })).toBe(
      true,
    );
    expect(captureFromEnv(undefined, { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: '1' })).toBe(
      false,
    );
    expect(captureFromEnv(false, { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' })).toBe(false);
    expect(captureFromEnv(true, {})).toBe(true);
  });

  it('cuts long strings alike and keeps the JSON, the keys and the short values whole', () => {
    const messages = [
      { role: 'user', parts: [{ type: 'text', content: 'a'.repeat(3000) }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: 'b'.repeat(5000) }] },
    ];
    const text = capturedJson(messages, same, 1000);
    expect(text.length).toBeLessThanOrEqual(1000);
    const kept = JSON.parse(text);
    expect(kept.map((m: { role: string }) => m.role)).toEqual(['user', 'tool']);
    expect(kept[1].parts[0]).toMatchObject({ type: 'tool_call_response', id: 'call_1' });
    expect(kept[0].parts[0].content).toMatch(/^a+…\[\d+ chars cut\]$/);
    expect(kept[1].parts[0].response).toMatch(/^b+…\[\d+ chars cut\]$/);
    expect(capturedJson({ short: 'x' }, same, 1000)).toBe('{"short":"x"}');
  });

  it('redacts before it measures', () => {
    const redact = <T>(value: T): T =>
      JSON.parse(JSON.stringify(value).replaceAll('sk-secret', '[REDACTED]'));
    expect(capturedJson({ key: 'sk-secret' }, redact, 100)).toBe('{"key":"[REDACTED]"}');
  });
});
