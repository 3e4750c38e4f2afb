import type { Attributes } from '@opentelemetry/api';
import type { TelemetryUsage } from '../telemetry/agent-telemetry.js';

/**
 * The attribute names of the OpenTelemetry GenAI semantic conventions this package writes (the GenAI
 * conventions as released with semantic-conventions v1.45.0 / semantic-conventions-genai v0.1.0;
 * docs/telemetry.md), and agentloop's own under `agentloop.*`.
 */
export const ATTR = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  conversation: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  finishReasons: 'gen_ai.response.finish_reasons',
  timeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  reasoningTokens: 'gen_ai.usage.reasoning.output_tokens',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  systemInstructions: 'gen_ai.system_instructions',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolDescription: 'gen_ai.tool.description',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
  tokenType: 'gen_ai.token.type',
  mcpMethod: 'mcp.method.name',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  errorType: 'error.type',
  terminateReason: 'agentloop.terminate_reason',
  iterations: 'agentloop.iterations',
  approvalWaitMs: 'agentloop.approval.wait_ms',
  suspended: 'agentloop.suspended',
  turnKind: 'agentloop.turn.kind',
  attempt: 'agentloop.attempt',
  wire: 'agentloop.wire',
  startedEarly: 'agentloop.tool.started_early',
  idempotencyKey: 'agentloop.tool.idempotency_key',
  fromLedger: 'agentloop.tool.from_ledger',
  mcpServer: 'agentloop.mcp.server',
  decision: 'agentloop.approval.decision',
  answeredBy: 'agentloop.approval.answered_by',
  always: 'agentloop.approval.always',
} as const;

/** `gen_ai.provider.name`: the wire is OpenAI's (Chat Completions or the Responses API). */
export const PROVIDER = 'openai';

/** `server.address` and `server.port` of a base URL (the port from the scheme when the URL has none). */
export function serverAttributes(baseUrl: string): Attributes {
  try {
    const url = new URL(baseUrl);
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    return { [ATTR.serverAddress]: url.hostname, [ATTR.serverPort]: port };
  } catch {
    return {};
  }
}

/** The request parameters the conventions name, from the body's extra fields. */
export function requestAttributes(request: Readonly<Record<string, unknown>>, stream: boolean): Attributes {
  const attributes: Attributes = { 'gen_ai.request.stream': stream };
  const number = (key: string, name: string) => {
    const value = request[key];
    if (typeof value === 'number' && Number.isFinite(value)) attributes[name] = value;
  };
  number('temperature', 'gen_ai.request.temperature');
  number('top_p', 'gen_ai.request.top_p');
  number('frequency_penalty', 'gen_ai.request.frequency_penalty');
  number('presence_penalty', 'gen_ai.request.presence_penalty');
  number('seed', 'gen_ai.request.seed');
  number('n', 'gen_ai.request.choice.count');
  for (const key of ['max_completion_tokens', 'max_tokens', 'max_output_tokens'])
    if (attributes['gen_ai.request.max_tokens'] === undefined) number(key, 'gen_ai.request.max_tokens');
  const stop = request.stop;
  if (typeof stop === 'string') attributes['gen_ai.request.stop_sequences'] = [stop];
  else if (Array.isArray(stop) && stop.every((s) => typeof s === 'string'))
    attributes['gen_ai.request.stop_sequences'] = stop as string[];
  return attributes;
}

/** Token counts as the conventions' usage attributes. */
export function usageAttributes(usage: TelemetryUsage): Attributes {
  const attributes: Attributes = {
    [ATTR.inputTokens]: usage.inputTokens,
    [ATTR.outputTokens]: usage.outputTokens,
  };
  if (usage.cachedInputTokens !== undefined) attributes[ATTR.cacheReadTokens] = usage.cachedInputTokens;
  if (usage.reasoningTokens !== undefined) attributes[ATTR.reasoningTokens] = usage.reasoningTokens;
  return attributes;
}
