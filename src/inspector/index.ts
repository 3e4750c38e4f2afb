// agentloop/inspector: the local web inspector and the Stately inspector bridge.

export {
  type InspectorServer,
  type InspectorServerOptions,
  startInspectorServer,
} from './inspector-server.js';
export { machineChart } from './machine-graph.js';
export { createSanitizer, type SanitizeOptions, type Sanitizer } from './sanitize.js';
export { loadSavedSessions, type SavedSessionView, savedSessionView } from './saved-sessions.js';
export { type StatelyBridge, startStatelyBridge } from './stately-bridge.js';
export {
  type StatelyInspectOptions,
  statelyInspection,
  statelyInspectorOptions,
} from './stately-inspector.js';
