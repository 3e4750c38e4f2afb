import { auditLogFor } from '../events/audit-log.js';
import { attachDebugLog, debugFromEnv } from '../events/debug-log.js';
import type { AgentEventBus } from '../events/event-bus.js';
import { createRedactor, type Redactor } from '../events/redact.js';
import { sharedOpenAIClient } from '../llm/openai-client.js';
import { composeToolHooks } from '../machines/actors/compose-tool-hooks.js';
import type { AgentEffects } from '../machines/agent-effects.js';
import type { SessionPersistence } from '../session/persistent-session.js';
import { TRACE_CONTEXT_EVENT } from '../telemetry/trace-context-record.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { attachInspection, type InspectionAttachment, inspectionSecrets } from './agent-inspection.js';
import type { AgentOptions } from './agent-options.js';
import { persistenceFor } from './agent-persistence.js';
import { type AgentSkills, agentSkills } from './agent-skills.js';
import { type AgentTools, agentTools } from './agent-tools.js';
import { effectsFromOptions } from './effects-from-options.js';
import { eventsHeard } from './event-relay.js';
import { type TurnTelemetry, turnTelemetryFor, withTraceRestore } from './turn-telemetry.js';

/** What the parts tell the agent they belong to. */
export interface AgentPartsOwner {
  bus: AgentEventBus;
  /** The agent's session id as it stands (telemetry reads it per turn). */
  sessionId(): string;
  /** Publishes an `error` event the machine does not emit itself. */
  publishError(message: string, code: string): void;
  /** A session write failed (`what`: the write, for the message). */
  writeFailed(error: unknown, what: string): void;
}

/** What an agent is made of, each part built from its options. */
export interface AgentParts {
  redactor: Redactor;
  inspectionSecrets: readonly string[];
  registry: ToolRegistry;
  mcp: AgentTools['mcp'];
  skills: AgentSkills | undefined;
  telemetry: TurnTelemetry | undefined;
  persistence: SessionPersistence | undefined;
  effects: AgentEffects;
  inspection: InspectionAttachment | undefined;
}

/**
 * Builds an agent's parts from its options, in the order they need each other: the client and the
 * redactor (from its key and `secrets`), skills and tools (MCP servers included), telemetry, the session
 * keeper, and the effects the machine runs (model calls, tool runs with the ledger, audit and caller
 * hooks), then inspection. Nothing starts here: `loadAndStart` does.
 */
export function agentParts(options: AgentOptions<unknown>, owner: AgentPartsOwner): AgentParts {
  const client = sharedOpenAIClient(options);
  const redactor = createRedactor({
    knownSecrets: [client.apiKey, options.apiKey],
    ...(options.secrets ? { secrets: options.secrets } : {}),
  });
  const secrets = inspectionSecrets([client.apiKey, options.apiKey], options.secrets);
  const { skills: skillsOption, tools = [], store } = options;
  const skills = skillsOption ? agentSkills(skillsOption, tools, store) : undefined;
  const report = (message: string) => owner.publishError(message, 'mcp_server');
  const { registry, mcp } = agentTools(options, skills, report, redactor);
  let persistence: SessionPersistence | undefined;
  const telemetry = turnTelemetryFor(options, {
    sessionId: owner.sessionId,
    baseUrl: client.baseURL,
    redact: redactor.redactValue,
    report: (message) => owner.publishError(message, 'telemetry'),
    keep: (record) => persistence?.recordEvent(TRACE_CONTEXT_EVENT, record),
  });
  persistence = persistenceFor(withTraceRestore(options, telemetry), registry, redactor, owner.writeFailed);
  const audit = auditLogFor(options.auditLog, redactor);
  const effects = effectsFromOptions(options, {
    client,
    registry,
    hooks: composeToolHooks(persistence?.hooks(), options.toolHooks, audit),
    hears: eventsHeard(owner.bus, persistence !== undefined),
    mcp,
    report: owner.publishError,
    redact: redactor.redact,
    debug: attachDebugLog(owner.bus, options.debug ?? debugFromEnv(), redactor.redact),
    telemetry,
  });
  const inspection = attachInspection(options.inspect, secrets);
  return {
    redactor,
    inspectionSecrets: secrets,
    registry,
    mcp,
    skills,
    telemetry,
    persistence,
    effects,
    inspection,
  };
}
