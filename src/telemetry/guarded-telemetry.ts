import type { AgentTelemetry } from './agent-telemetry.js';

/**
 * The telemetry with every hook guarded: a hook that throws is reported (once per agent: a broken
 * backend throws on every call) and treated as absent for that call, so a turn never breaks on it.
 * `toolRun` still runs the tool when the hook throws around it, and lets the tool's own throw through.
 */
export function guardedTelemetry(
  telemetry: AgentTelemetry,
  report: (message: string) => void,
): Required<AgentTelemetry> {
  let reported = false;
  const failed = (hook: string, error: unknown): undefined => {
    if (reported) return undefined;
    reported = true;
    const why = error instanceof Error ? error.message : String(error);
    report(`telemetry hook ${hook} threw (reported once; the turn goes on): ${why}`);
    return undefined;
  };
  const guard =
    <K extends keyof AgentTelemetry>(hook: K) =>
    (...args: unknown[]): unknown => {
      const fn = telemetry[hook] as ((...a: unknown[]) => unknown) | undefined;
      if (!fn) return undefined;
      try {
        return fn.apply(telemetry, args);
      } catch (error) {
        return failed(hook, error);
      }
    };
  return {
    turnStart: guard('turnStart'),
    turnEnd: guard('turnEnd') as Required<AgentTelemetry>['turnEnd'],
    modelCallStart: guard('modelCallStart'),
    modelCallEnd: guard('modelCallEnd') as Required<AgentTelemetry>['modelCallEnd'],
    toolStart: guard('toolStart'),
    toolEnd: guard('toolEnd') as Required<AgentTelemetry>['toolEnd'],
    approvalRequested: guard('approvalRequested'),
    approvalResolved: guard('approvalResolved') as Required<AgentTelemetry>['approvalResolved'],
    carrierOf: guard('carrierOf') as Required<AgentTelemetry>['carrierOf'],
    fromCarrier: guard('fromCarrier'),
    activeCarrier: guard('activeCarrier') as Required<AgentTelemetry>['activeCarrier'],
    toolRun<T>(tool: unknown, execute: () => T): T {
      if (!telemetry.toolRun) return execute();
      // Whether `execute` was entered, and whether it returned: a throw from inside it is the tool's.
      const progress: { state: 'before' | 'running' | 'returned'; value?: T } = { state: 'before' };
      try {
        return telemetry.toolRun(tool, () => {
          progress.state = 'running';
          progress.value = execute();
          progress.state = 'returned';
          return progress.value;
        });
      } catch (error) {
        if (progress.state === 'running') throw error;
        failed('toolRun', error);
        return progress.state === 'returned' ? (progress.value as T) : execute();
      }
    },
  };
}
