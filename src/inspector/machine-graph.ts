import type { AnyStateMachine } from 'xstate';
import type { ChartDefinition, ChartEdge, ChartNode } from './protocol.js';

/** The part of a state node the chart reads (XState's `StateNode`). */
interface StateNodeLike {
  states: Record<string, StateNodeLike>;
  /** Eventless transitions (not part of `definition.transitions`). */
  always?: TransitionDefinition[];
  definition: NodeDefinition;
}

/** The part of a state node definition the chart reads (XState's `StateNodeDefinition`). */
interface NodeDefinition {
  id: string;
  key: string;
  type: ChartNode['type'];
  initial?: { target?: { id?: string; key?: string }[] } | undefined;
  transitions: TransitionDefinition[];
  invoke: { id?: string; src?: unknown }[];
  tags?: string[];
  description?: string | undefined;
}

interface TransitionDefinition {
  eventType: string;
  target?: { id: string }[] | undefined;
  guard?: unknown;
  reenter?: boolean;
}

/** A readable label for an event type: `xstate.done.actor.callLlm` becomes `done: callLlm`. */
export function eventLabel(eventType: string): string {
  if (eventType === '') return 'always';
  const done = /^xstate\.done\.actor\.(.+)$/.exec(eventType);
  if (done) return `done: ${done[1]}`;
  const error = /^xstate\.error\.actor\.(.+)$/.exec(eventType);
  if (error) return `error: ${error[1]}`;
  return eventType;
}

function guardName(guard: unknown): string | undefined {
  if (guard === undefined || guard === null) return undefined;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function')
    return guard.name && !guard.name.startsWith('guard') ? guard.name : 'guard';
  if (typeof guard === 'object' && typeof (guard as { type?: unknown }).type === 'string')
    return (guard as { type: string }).type;
  return 'guard';
}

/**
 * The chart of a machine, read from its definition (`machine.root`): every state node with its
 * children and invoked actors, and one edge per transition that has a target. Transitions without a
 * target (actions only, such as `LLM.DELTA`) are listed on their node as `internal` events.
 */
export function machineChart(machine: AnyStateMachine): ChartDefinition {
  const rootNode = machine.root as unknown as StateNodeLike;
  const edges: ChartEdge[] = [];

  const visit = (stateNode: StateNodeLike, path: string[]): ChartNode => {
    const node = stateNode.definition;
    const internal: string[] = [];
    for (const t of [...node.transitions, ...(stateNode.always ?? [])]) {
      const targets = (t.target ?? []).map((x) => x.id);
      const guard = guardName(t.guard);
      if (targets.length === 0) {
        const label = eventLabel(t.eventType);
        if (!internal.includes(label)) internal.push(label);
        continue;
      }
      for (const target of targets) {
        const edge: ChartEdge = {
          source: node.id,
          target,
          event: t.eventType,
          label: eventLabel(t.eventType),
        };
        if (guard) edge.guard = guard;
        edges.push(edge);
      }
    }
    const initialTarget = node.initial?.target?.[0];
    const chart: ChartNode = {
      id: node.id,
      key: node.key,
      path,
      type: node.type,
      children: Object.values(stateNode.states).map((child) => visit(child, [...path, child.definition.key])),
      invoke: node.invoke.map((i) => i.id ?? (typeof i.src === 'string' ? i.src : 'actor')),
      internal,
    };
    if (initialTarget?.id) chart.initial = initialTarget.id;
    if (node.description) chart.description = node.description;
    return chart;
  };

  const root = visit(rootNode, []);
  return { id: root.id, root, edges };
}

/**
 * The ids of the state nodes a state value makes active, e.g. `'Thinking'` gives
 * `['agent.Thinking']` and `{ Thinking: 'streaming' }` gives `['agent.Thinking', 'agent.Thinking.streaming']`.
 */
export function activeNodeIds(rootId: string, value: unknown): string[] {
  const out: string[] = [];
  const walk = (prefix: string, v: unknown) => {
    if (typeof v === 'string') {
      out.push(`${prefix}.${v}`);
      return;
    }
    if (v && typeof v === 'object') {
      for (const [key, child] of Object.entries(v)) {
        out.push(`${prefix}.${key}`);
        walk(`${prefix}.${key}`, child);
      }
    }
  };
  walk(rootId, value);
  return out;
}
