import type { AgentEvent } from '../machines/emitted-events.js';
import type { AgentEventBus } from './event-bus.js';

/** Where debug lines go: `true` for stderr, a function for anything else. */
export type DebugOption = boolean | ((line: string) => void);

/** Whether `DEBUG` names agentloop (`DEBUG=agentloop`, `DEBUG=agentloop,other`, `DEBUG=*`). */
export function debugFromEnv(env: Record<string, string | undefined> = process.env): boolean {
  const value = env.DEBUG ?? '';
  return value.split(/[\s,]+/).some((name) => name === '*' || name === 'agentloop' || name === 'agentloop:*');
}

/** Where debug lines go once redacted; `undefined` when debugging is off. */
function debugSink(
  option: DebugOption,
  redact: (line: string) => string = (line) => line,
): ((line: string) => void) | undefined {
  if (!option) return undefined;
  const sink = typeof option === 'function' ? option : (line: string) => process.stderr.write(`${line}\n`);
  return (line) => sink(redact(line));
}

/**
 * Prints one line per iteration (with the model call's duration) and one per tool call (with its
 * duration and outcome), listening on the bus. Every line goes through `redact` (secrets never reach
 * a log). Returns the redacted line writer (`undefined` when debugging is off), for other debug lines.
 */
export function attachDebugLog(
  bus: AgentEventBus,
  option: DebugOption,
  redact: (line: string) => string = (line) => line,
): ((line: string) => void) | undefined {
  const write = debugSink(option, redact);
  if (!write) return undefined;
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
  return write;
}
