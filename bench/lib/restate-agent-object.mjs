// The agent on bare Restate steps, with none of the adapter (bench/engines.mjs mode `restate-agent`,
// rsplit36): `restate - restate-agent` is the adapter's own part (its view, `turn` entry, mirror,
// approval and interrupt loop, its driver's rounds), and `(restate-agent - restate-hand) - (in-process
// - hand)` what the agent itself costs more inside Restate than it does in process.
import { createAgent } from '../../dist/index.js';
import { FINAL, shapeOptions, TASK } from './engine-shapes.mjs';

/**
 * The smallest correct `DurableSteps` on a Restate context: each effect a `ctx.run` issued where the
 * machine asks for it (so the journal's commands come in the machine's order). The SDK lets one await
 * at a time make progress (two at once fail the attempt, "awaitNext already pending"), so the steps
 * asked together (a batch's calls: the machine asks for them in one go) are awaited together, once
 * they are all asked (a microtask after the first), a lone step by itself and several with the
 * SDK's `RestatePromise.all`, as the hand-written loop awaits a reply's calls; steps asked while that
 * await runs wait for the next. No race, no turn loop, no event-loop turns of its own: what it cannot
 * do is what the adapter's driver adds (an awakeable or a cancellation raced with running steps, an
 * outcome handed over as soon as it comes).
 */
export function gatheredSteps(sdk, ctx) {
  /** Steps asked and not yet awaited: their Restate promise and their asker's settle. */
  let asked = [];
  let pumping = false;
  const pump = async () => {
    while (asked.length > 0) {
      const group = asked;
      asked = [];
      if (group.length === 1) {
        const [one] = group;
        await one.promise.then(one.resolve, one.reject);
        continue;
      }
      // Outcomes as data, so one failure (an engine error: a step's own failures are data) settles its asker alone.
      const outcomes = await sdk.RestatePromise.all(
        group.map((s) => s.promise.map((value, failure) => (failure ? { error: failure } : { value }))),
      );
      for (const [k, o] of outcomes.entries()) {
        if ('error' in o) group[k].reject(o.error);
        else group[k].resolve(o.value);
      }
    }
    pumping = false;
  };
  return {
    step(key, run) {
      const promise = ctx.run(key, run);
      return new Promise((resolve, reject) => {
        asked.push({ promise, resolve, reject });
        if (pumping) return;
        pumping = true;
        queueMicrotask(pump);
      });
    },
  };
}

/**
 * The view the adapter writes at a turn's end (src/engines/restate/restate-agent.ts, `runTurn`): the
 * same keys, as large, built from the same agent and result.
 */
function endView(ctx, agent, result) {
  const turnResult = {
    success: result.success,
    response: result.response,
    terminateReason: result.terminateReason,
    iterations: result.iterations,
    state: agent.state,
  };
  return {
    sessionId: ctx.key,
    state: agent.state,
    turn: agent.context.turn,
    pendingApprovals: agent.pendingApprovals,
    response: result.response,
    terminateReason: result.terminateReason,
    turnId: ctx.request().id,
    ended: true,
    result: turnResult,
  };
}

/**
 * Object `agent` (handler `send({ shape })`): the agent on {@link gatheredSteps}, its snapshot kept in the
 * object's state as the hand-written loop keeps its messages (`bench/lib/engine-shapes.mjs`
 * `handRestateObject`: a `get` at the turn's start, one `set` at its end), and nothing else: no view,
 * no `turn` entry, no mirror, no approvals, no interrupt. With `writes` (object `agentw`, mode
 * `restate-agent-w`), the adapter's two state writes as well: the `turn` entry at the start and the
 * view at the end, so that `restate - restate-agent-w` is the adapter's own part less its writes.
 */
export function agentRestateObject(sdk, shapes, { name = 'agent', writes = false } = {}) {
  return sdk.object({
    name,
    handlers: {
      send: async (ctx, input) => {
        const snapshot = (await ctx.get('snapshot')) ?? undefined;
        if (writes) ctx.set('turn', ctx.request().id);
        const agent = createAgent({
          ...shapeOptions(shapes, input.shape),
          sessionId: ctx.key,
          ...(snapshot ? { snapshot } : {}),
          durableSteps: gatheredSteps(sdk, ctx),
        });
        try {
          const result = await agent.send(TASK);
          ctx.set('snapshot', agent.actor.getPersistedSnapshot());
          if (writes) ctx.set('view', endView(ctx, agent, result));
          if (result.response !== FINAL) throw new Error(`unexpected ${result.response}`);
          return { response: result.response };
        } finally {
          agent.stop();
        }
      },
    },
  });
}
