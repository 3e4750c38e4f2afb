import type OpenAI from 'openai';
import { DEFAULTS } from '../defaults.js';
import { callLlmEffect } from '../machines/actors/call-llm.js';
import type { ToolRunHooks } from '../machines/actors/run-tools.js';
import { runToolsEffect } from '../machines/actors/run-tools.js';
import type { AgentEffects } from '../machines/agent-effects.js';
import type { AgentEventType } from '../machines/emitted-events.js';
import { createContextGuard } from '../prompt/context-guard.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { AgentOptions } from './agent-options.js';

/**
 * One agent's effects from its options: the model call over `client` (streaming, retries, context
 * window), the tool runner over `registry` with `hooks` (transcript ledger, audit log, the caller's),
 * and the `initialize` option. `hears` says which emitted events anyone listens to.
 */
export function effectsFromOptions(
  options: AgentOptions<unknown>,
  client: OpenAI,
  registry: ToolRegistry,
  hooks: ToolRunHooks,
  hears: (type: AgentEventType) => boolean,
): AgentEffects {
  const model = options.model ?? DEFAULTS.model;
  const prepareMessages =
    options.prepareMessages ??
    (options.contextWindow === false
      ? undefined
      : createContextGuard(model, registry.toJSON(), options.contextWindow ?? {}));
  const callLlm = callLlmEffect({
    client,
    model,
    registry,
    stream: options.stream ?? true,
    approval: options.approval ?? 'tool',
    eagerToolStart: options.eagerToolStart ?? DEFAULTS.eagerToolStart,
    ...(options.toolFormat ? { toolFormat: options.toolFormat } : {}),
    ...(options.request ? { request: options.request } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(prepareMessages ? { prepareMessages } : {}),
  });
  const limits = options.limits ?? {};
  return {
    initialize: async () => (options.initialize ? await options.initialize() : {}),
    callLlm,
    runTools: runToolsEffect({
      registry,
      ...(limits.toolTimeoutMs !== undefined ? { toolTimeoutMs: limits.toolTimeoutMs } : {}),
      ...(limits.maxToolResultChars !== undefined ? { maxResultChars: limits.maxToolResultChars } : {}),
      ...hooks,
    }),
    hears,
  };
}
