// The pieces the XState reference harnesses (xstate-floor, xstate-service, xstate-turn) share, so
// that what differs between them is only how their effects are arranged.
import { assistantMessage, taskMessages } from './chat-calls.mjs';
import { assign, createActor, toPromise } from './root-deps.mjs';

/** The machines' context: the conversation, the calls to run next and the model calls made. */
export const initialContext = () => ({ messages: taskMessages(), toolCalls: [], calls: 0 });

/** A model answer (the event's `output`) that asks for tools. */
export const hasToolCalls = ({ event }) => (event.output.tool_calls?.length ?? 0) > 0;

/** Appends a model answer (the event's `output`), counts the call and keeps its tool calls. */
export const recordAnswer = assign(({ context, event }) => ({
  calls: context.calls + 1,
  toolCalls: event.output.tool_calls ?? [],
  messages: [...context.messages, assistantMessage(event.output)],
}));

/** Appends the tool messages (the event's `output`). */
export const appendToolResults = assign(({ context, event }) => ({
  toolCalls: [],
  messages: [...context.messages, ...event.output],
}));

/** Runs one session: an actor of `machine` until its final state; resolves with its output. */
export function runToCompletion(machine) {
  const actor = createActor(machine);
  actor.start();
  return toPromise(actor);
}
