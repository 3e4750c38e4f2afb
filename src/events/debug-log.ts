import type { AgentEvent } from '../machines/emitted-events.js';
import type { AgentEventBus } from './event-bus.js';

/** Where debug lines go: `true` for stderr, a function for anything else. */
export type DebugOption = boolean | ((line: string) => void);

/** Whether `DEBUG` names agentloop (`DEBUG=agentloop`, `DEBUG=agentloop,other`, `DEBUG=*`). */
export function debugFromEnv(env: Record<string, string | undefined> = process.env): boolean {
  const value = env.DEBUG ?? '';
  return value.split(/[\s,]+/).some((name) => name === '*' || name === 'agentloop' || name === 'agentloop:*');
}

/**
 * Prints one line per iteration (with the model call's duration) and one per tool call (with its
 * duration and outcome), listening on the bus. Every line goes through `redact` (secrets never reach
 * a log). Returns a function that stops it.
 */
export function attachDebugLog(
  bus: AgentEventBus,
  option: DebugOption,
  redact: (line: string) => string = (line) => line,
): () => void {
  if (!option) return () => {};
  const sink = typeof option === 'function' ? option : (line: string) => process.stderr.write(`${line}\n`);
  const write = (line: string) => sink(redact(line));
  let iterationStart = 0;
  const prefix = (e: { sessionId: string; turn: number; iteration: number }) =>
    `[agentloop ${e.sessionId.slice(0, 8)}] turn ${e.turn} iter ${e.iteration}`;
  const onEvent = (e: AgentEvent) => {
    switch (e.type) {
      case 'iteration':
        iterationStart = e.timestamp;
        break;
      case 'usage':
        write(
          `${prefix(e)} model call ${e.timestamp - iterationStart} ms, tokens ${e.usage.promptTokens}+${e.usage.completionTokens}`,
        );
        break;
      case 'tool_call_end': {
        const outcome = e.error !== undefined ? `error: ${e.error.slice(0, 120)}` : 'ok';
        write(`${prefix(e)} tool ${e.name} (${e.toolCallId}) ${e.durationMs.toFixed(1)} ms ${outcome}`);
        break;
      }
      case 'turn_end':
        write(`${prefix(e)} turn ended: ${e.terminateReason} after ${e.iterations} model calls`);
        break;
      case 'error':
        write(`${prefix(e)} error: ${e.message}`);
        break;
    }
  };
  bus.on('*', onEvent);
  return () => {
    bus.off('*', onEvent);
  };
}
