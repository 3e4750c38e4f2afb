import type { ModelCallEndInfo, TelemetryUsage } from '../telemetry/agent-telemetry.js';
import type { TelemetryScope } from '../telemetry/telemetry-scope.js';
import { classifyLlmError } from './error-classification.js';
import type { Completion } from './model-reply.js';
import type { ModelOptions, ModelRequest } from './model-request.js';
import type { UsageCounts } from './reply-fields.js';

/**
 * One HTTP attempt of a model call under telemetry: the attempt's hook starts before the request goes
 * out and ends with the reply's identity, finish reason and usage, or with the failure's type (the
 * HTTP status when the server answered, else the kind of failure).
 */
export function observedAttempt(
  telemetry: Pick<TelemetryScope, 'modelCallStart' | 'modelCallEnd'>,
  options: ModelOptions,
  request: ModelRequest,
  attempt: number,
  send: () => Promise<Completion>,
): Promise<Completion> {
  const handle = telemetry.modelCallStart({
    wire: options.api ?? 'chat-completions',
    model: options.model,
    baseUrl: options.client.baseURL,
    attempt,
    stream: options.stream !== false,
    request: options.request ?? {},
    messages: request.messages,
    tools: request.tools,
  });
  let sent: Promise<Completion>;
  try {
    sent = send();
  } catch (error) {
    sent = Promise.reject(error);
  }
  return sent.then(
    (completion) => {
      telemetry.modelCallEnd(handle, attemptEnd(completion));
      return completion;
    },
    (error: unknown) => {
      const verdict = classifyLlmError(error, { url: options.client.baseURL });
      telemetry.modelCallEnd(handle, {
        errorType: verdict.status !== undefined ? String(verdict.status) : verdict.kind,
        errorMessage: verdict.message,
      });
      throw error;
    },
  );
}

function attemptEnd(completion: Completion): ModelCallEndInfo {
  const end: ModelCallEndInfo = {
    finishReason: completion.finishReason,
    output: {
      content: completion.content,
      toolCalls: completion.calls.map((c) => ({ id: c.id, name: c.name, arguments: c.argsText })),
    },
  };
  if (completion.responseId !== undefined) end.responseId = completion.responseId;
  if (completion.responseModel !== undefined) end.responseModel = completion.responseModel;
  if (completion.firstChunkMs !== undefined) end.firstChunkMs = completion.firstChunkMs;
  if (completion.usage) end.usage = telemetryUsage(completion.usage);
  return end;
}

function telemetryUsage(usage: UsageCounts): TelemetryUsage {
  const counts: TelemetryUsage = { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens };
  if (usage.cached_tokens !== undefined) counts.cachedInputTokens = usage.cached_tokens;
  if (usage.reasoning_tokens !== undefined) counts.reasoningTokens = usage.reasoning_tokens;
  return counts;
}
