import type { InspectionEvent, Observer } from 'xstate';
import { looksLikeSecret } from '../events/secret-shape.js';

/** An XState inspection observer, as `createActor(..., { inspect })` takes it. */
export type InspectionObserver = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/** What an attached inspection gives the agent: the observer, and how to let go of what it holds. */
export interface InspectionAttachment {
  observer: InspectionObserver;
  /** Closes what the inspection opened (sockets, servers); called by `agent.stop()`. */
  stop(): void;
}

/**
 * An inspection made for one agent: it is told the agent's secrets (so that it can keep them out of
 * what it sends) when the agent starts. `statelyInspection()` from agentloop is one.
 */
export interface AgentInspection {
  attach(agent: { secrets: readonly string[] }): InspectionAttachment;
}

/** An inspector object such as `@statelyai/inspect`'s `createWebSocketInspector()`. */
export interface InspectorLike {
  inspect: Observer<InspectionEvent>;
  stop?: () => void;
}

/** What `createAgent`'s `inspect` option takes. */
export type InspectOption = InspectionObserver | InspectorLike | AgentInspection;

/**
 * The observer for `createActor` from the `inspect` option. An observer or an inspector object is used
 * as given (and not stopped by the agent: its owner stops it); an `AgentInspection` is attached.
 */
export function attachInspection(
  option: InspectOption | undefined,
  secrets: readonly string[],
): InspectionAttachment | undefined {
  if (option === undefined) return undefined;
  if (typeof option === 'function') return { observer: option, stop: () => {} };
  if ('attach' in option && typeof option.attach === 'function') return option.attach({ secrets });
  if ('inspect' in option && typeof option.inspect?.next === 'function') {
    return { observer: option.inspect, stop: () => {} };
  }
  return { observer: option as Observer<InspectionEvent>, stop: () => {} };
}

/**
 * The strings inspectors must never show: the same rule as the redactor's, known keys only when they
 * look like keys (a placeholder such as the scripted server's is not a secret), configured secrets as given.
 */
export function inspectionSecrets(
  keys: readonly (string | null | undefined)[],
  secrets: readonly (string | RegExp)[] = [],
): string[] {
  return [
    ...keys.filter((s): s is string => typeof s === 'string' && looksLikeSecret(s)),
    ...secrets.filter((s): s is string => typeof s === 'string' && s.length > 0),
  ];
}
