// The agent on bare Restate steps, with none of the adapter (bench/engines.mjs mode `restate-agent`,
// rsplit36): `restate - restate-agent` is the adapter's own part (its view, `turn` entry, mirror,
// approval and interrupt loop, its driver's rounds), and `(restate-agent - restate-hand) - (in-process
// - hand)` what the agent itself costs more inside Restate than it does in process.
import { createAgent } from '../../dist/index.js';
import { FINAL, shapeOptions } from './engine-shapes.mjs';

/**
 * The smallest correct `DurableSteps` on a Restate context: each effect a `ctx.run` issued where the
 * machine asks for it (so the journal's commands come in the machine's order), its promise awaited
 * only once the one asked before it settled. The SDK lets one await at a time make progress (two at
 * once fail the attempt, "awaitNext already pending"), so a batch's steps, asked for together, are
 * awaited one after another, in the order asked (their closures still run together: the SDK starts
 * each on a `do_progress`, whichever step is awaited). No race, no loop, no event-loop turns of its
 * own: what it cannot do is what the adapter's driver adds (an awakeable or a cancellation raced with
 * the running steps).
 */
export function serialSteps(ctx) {
  let tail = Promise.resolve();
  return {
    step(key, run) {
      const recorded = ctx.run(key, run);
      const settled = tail.then(() => recorded);
      tail = settled.then(
        () => {},
        () => {},
      );
      return settled;
    },
  };
}

/**
 * Object `agent` (handler `send({ shape })`): the agent on {@link serialSteps}, its snapshot kept in the
 * object's state as the hand-written loop keeps its messages (`bench/lib/engine-shapes.mjs`
 * `handRestateObject`: a `get` at the turn's start, one `set` at its end), and nothing else: no view,
 * no `turn` entry, no mirror, no approvals, no interrupt.
 */
export function agentRestateObject(sdk, shapes, { name = 'agent' } = {}) {
  return sdk.object({
    name,
    handlers: {
      send: async (ctx, input) => {
        const snapshot = (await ctx.get('snapshot')) ?? undefined;
        const agent = createAgent({
          ...shapeOptions(shapes, input.shape),
          sessionId: ctx.key,
          ...(snapshot ? { snapshot } : {}),
          durableSteps: serialSteps(ctx),
        });
        try {
          const result = await agent.send('go');
          ctx.set('snapshot', agent.actor.getPersistedSnapshot());
          if (result.response !== FINAL) throw new Error(`unexpected ${result.response}`);
          return { response: result.response };
        } finally {
          agent.stop();
        }
      },
    },
  });
}
