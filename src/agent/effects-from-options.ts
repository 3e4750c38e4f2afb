import type OpenAI from 'openai';
import { DEFAULTS } from '../defaults.js';
import { unsupportedResponsesField } from '../llm/responses-request.js';
import { callLlmEffect } from '../machines/actors/call-llm.js';
import { compactEffect } from '../machines/actors/compact-conversation.js';
import type { ToolRunHooks } from '../machines/actors/run-tools.js';
import { runToolsEffect } from '../machines/actors/run-tools.js';
import type { AgentEffects } from '../machines/agent-effects.js';
import { durableEffects } from '../machines/durable-effects.js';
import type { AgentEventType } from '../machines/emitted-events.js';
import type { McpServers } from '../mcp/mcp-servers.js';
import { evaluateContextProviders } from '../prompt/context-blocks.js';
import { createContextGuard, createRequestMeasure } from '../prompt/context-guard.js';
import { checkPricing, type ModelPrice, resolveModelPrice } from '../prompt/model-prices.js';
import { interruptedToolResult } from '../session/transcript.js';
import type { TelemetryScope } from '../telemetry/telemetry-scope.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { AgentOptions } from './agent-options.js';

/** What the effects need of the agent besides its options. */
export interface EffectsEnvironment {
  client: OpenAI;
  registry: ToolRegistry;
  hooks: ToolRunHooks;
  /** Whether anyone listens to an emitted event type. */
  hears: (type: AgentEventType) => boolean;
  /** The agent's MCP servers: a tool list they said changed is read again before each model call. */
  mcp?: McpServers | undefined;
  /** Reports a failure that does not stop the turn (a context provider that threw) as an `error` event. */
  report: (message: string, code: string) => void;
  /** The agent's redactor: a failed model call or `initialize` reaches the context (and so results) redacted. */
  redact: (text: string) => string;
  /** Debug lines (redacted), when debugging is on: what a reply held that was left out, once per kind. */
  debug?: ((line: string) => void) | undefined;
  /** The agent's telemetry bound to its current turn, when `telemetry` was given. */
  telemetry?: TelemetryScope | undefined;
}

/** Passes each distinct message on once (a server that sends an unknown part sends it in every reply). */
function oncePerMessage(write: (line: string) => void): (message: string) => void {
  const told = new Set<string>();
  return (message) => {
    if (told.has(message)) return;
    told.add(message);
    write(`[agentloop] model reply: ${message}`);
  };
}

/**
 * One agent's effects from its options: the model call over `client` (streaming, retries, context
 * window, context providers, MCP tool lists brought up to date first), the tool runner over `registry`
 * with `hooks` (transcript ledger, audit log, the caller's), and the `initialize` option.
 */
export function effectsFromOptions(options: AgentOptions<unknown>, env: EffectsEnvironment): AgentEffects {
  const { client, registry, hooks, hears, mcp } = env;
  const model = options.model ?? DEFAULTS.model;
  const prepareMessages =
    options.prepareMessages ??
    (options.contextWindow === false
      ? undefined
      : createContextGuard(model, () => registry.toJSON(), options.contextWindow ?? {}));
  const providers = options.contextProviders ?? [];
  const price = modelPrice(model, options);
  const unsupported = options.api === 'responses' ? unsupportedResponsesField(options.request) : undefined;
  if (unsupported !== undefined)
    throw new Error(
      `createAgent: request.${unsupported} has no equivalent in the Responses API (api: 'responses'): ` +
        "leave it out, or use api: 'chat-completions'",
    );
  // A `prepareMessages` of the caller's compacts when it reports `overCompactAt`.
  const compacts = options.compaction !== false && options.contextWindow !== false;
  const callLlm = callLlmEffect({
    client,
    model,
    registry,
    stream: options.stream ?? true,
    approval: options.approval ?? 'tool',
    eagerToolStart: options.eagerToolStart ?? DEFAULTS.eagerToolStart,
    price,
    compacts,
    telemetry: env.telemetry,
    ...(options.toolFormat ? { toolFormat: options.toolFormat } : {}),
    ...(options.api ? { api: options.api } : {}),
    ...(env.debug ? { onNotice: oncePerMessage(env.debug) } : {}),
    ...(options.request ? { request: options.request } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(prepareMessages ? { prepareMessages } : {}),
    ...(providers.length > 0
      ? {
          contextBlocks: (input, signal) =>
            evaluateContextProviders(
              providers,
              {
                sessionId: input.sessionId,
                turn: input.turn,
                iteration: input.iteration,
                messages: input.messages,
                signal,
              },
              (failure) => env.report(failure.message, 'context_provider'),
              options.contextProviderTimeoutMs,
            ),
        }
      : {}),
  });
  const limits = options.limits ?? {};
  const redacted = redactingFailures(env.redact);
  const initialize = options.initialize;
  const effects: AgentEffects = {
    // Without an `initialize` option there is nothing to run: the machine starts with no messages,
    // and under an engine no step is recorded for it (src/machines/durable-effects.ts).
    ...(initialize ? { initialize: redacted(async () => await initialize()) } : {}),
    callLlm: redacted(
      mcp
        ? async (input, io) => {
            await mcp.settle();
            return callLlm(input, io);
          }
        : callLlm,
    ),
    runTools: runToolsEffect({
      registry,
      telemetry: env.telemetry,
      ...(limits.toolTimeoutMs !== undefined ? { toolTimeoutMs: limits.toolTimeoutMs } : {}),
      ...(limits.maxToolResultChars !== undefined ? { maxResultChars: limits.maxToolResultChars } : {}),
      ...hooks,
    }),
    ...(compacts ? { compact: redacted(compaction(options, env, model)) } : {}),
    hears,
  };
  if (!options.durableSteps) return effects;
  return durableEffects(effects, {
    steps: options.durableSteps,
    isIdempotent: (name) => registry.get(name)?.idempotent === true,
    outcomeUnknown: interruptedToolResult,
  });
}

/** The compaction effect: the summary call over the agent's client and wire, measured against its window. */
function compaction(options: AgentOptions<unknown>, env: EffectsEnvironment, model: string) {
  const settings = options.compaction || {};
  const window = options.contextWindow || {};
  const summaryModel = settings.model ?? model;
  return compactEffect({
    client: env.client,
    model: summaryModel,
    stream: options.stream ?? true,
    price: resolveModelPrice(summaryModel, options.pricing),
    measure: createRequestMeasure(model, () => env.registry.toJSON(), window),
    // The summary call sends no tools; its model's own window, unless it is the agent's.
    summaryMeasure: createRequestMeasure(summaryModel, [], settings.model ? {} : window),
    ...(options.api ? { api: options.api } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(settings.timeoutMs !== undefined ? { timeoutMs: settings.timeoutMs } : {}),
    ...(settings.maxSummaryTokens !== undefined ? { maxSummaryTokens: settings.maxSummaryTokens } : {}),
  });
}

/**
 * The model's price (`pricing` over the built-in table), checked: a cost budget for a model without a
 * price could never apply, so it is refused here, at `createAgent`, naming the model and the option.
 */
function modelPrice(model: string, options: AgentOptions<unknown>): ModelPrice | undefined {
  checkPricing(options.pricing);
  const price = resolveModelPrice(model, options.pricing);
  const budget = (['maxCostUsd', 'maxSessionCostUsd'] as const).find((key) => options.limits?.[key] != null);
  if (budget && !price)
    throw new Error(
      `createAgent: \`limits.${budget}\` needs the price of model "${model}", which agentloop does not know: ` +
        `add it to \`pricing\` ({ "${model}": { inputPerMTok, cachedInputPerMTok, outputPerMTok } })`,
    );
  return price;
}

/**
 * Wraps an effect so that what it rejects with (or throws) is redacted (`redactedError`). No `async`
 * wrapper: a model call would keep one more suspended frame alive for as long as it waits.
 */
function redactingFailures(redact: (text: string) => string) {
  const failed = (error: unknown): never => {
    throw redactedError(error, redact);
  };
  return <A extends unknown[], R>(effect: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      try {
        return effect(...args).then(undefined, failed);
      } catch (error) {
        return Promise.reject(redactedError(error, redact));
      }
    };
}

/**
 * The error with its message redacted: a server's error body may echo the API key (`401 Incorrect API
 * key provided: sk-...`), and the message becomes the turn's `error`, its result and the answer of every
 * unanswered call. The error itself is kept (its class and `code` drive the machine's guards).
 */
function redactedError(error: unknown, redact: (text: string) => string): unknown {
  if (!(error instanceof Error)) return new Error(redact(String(error)));
  const message = redact(error.message);
  if (message !== error.message) error.message = message;
  return error;
}
