/**
 * `agentloop/testing`: a scripted OpenAI-compatible HTTP server for tests, demos and benchmarks.
 * Point the real `openai` SDK at `server.url`. It speaks Chat Completions (`/v1/chat/completions`) and
 * the Responses API (`/v1/responses`, `createAgent({ api: 'responses' })`) from the same scenario: a
 * Responses request is seen as its Chat Completions view (assistant messages keep their reasoning
 * items as `reasoning_items`), and a turn's `reasoning` is sent as a reasoning item whose encrypted
 * content the server expects back (docs/scripted-server.md).
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
  type ScriptedRequestInfo,
  type ScriptedToolCall,
  type ScriptedTurn,
  type ScriptedTurnFn,
} from './scenario.js';
export { type ScriptedServer, type ScriptedServerOptions, startScriptedServer } from './scripted-server.js';
