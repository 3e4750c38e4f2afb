/**
 * `agentloop/testing`: a scripted OpenAI-compatible HTTP server for tests, demos and benchmarks.
 * Point the real `openai` SDK at `server.url`.
 */
export {
  loadScenario,
  parseScenario,
  type Scenario,
  ScenarioError,
  type ScriptedError,
  type ScriptedFault,
  type ScriptedFinishReason,
  type ScriptedRequest,
  type ScriptedToolCall,
  type ScriptedTurn,
  type ScriptedTurnFn,
} from './scenario.js';
export { type ScriptedServer, type ScriptedServerOptions, startScriptedServer } from './scripted-server.js';
