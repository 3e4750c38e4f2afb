// What an invoked effect actor costs per call (lean36, issue 36): the same two-state machine (idle
// -GO-> calling -done-> idle, the result assigned) with its effect run three ways, CPU per call of this
// process: XState's `fromPromise`, agentloop's `effectActor` (src/machines/agent-effects.ts, how the
// agent runs each model call and tool batch), and no actor at all (the effect run outside, its result
// sent as an event: the same two machine steps). The difference is what an actor per call costs.
//   npm run build && node bench/effect-actor-cost.mjs [--calls=20000] [--rounds=4] [--dist=dist]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { assign, createActor, fromPromise, setup } from 'xstate';
import { flagArgs } from './lib/flags.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = flagArgs();
const calls = Number(args.calls ?? 20_000);
const rounds = Number(args.rounds ?? 4);
const dist = path.resolve(args.dist ?? path.join(here, '..', 'dist'));
const { effectActor, bindAgentEffects } = await import(`${dist}/machines/agent-effects.js`);

const work = async (input) => input.n + 1;
const invoking = (logic) =>
  setup({ actors: { call: logic } }).createMachine({
    context: { n: 0 },
    initial: 'idle',
    states: {
      idle: { on: { GO: 'calling' } },
      calling: {
        invoke: {
          src: 'call',
          input: ({ context }) => ({ n: context.n }),
          onDone: { target: 'idle', actions: assign({ n: ({ event }) => event.output }) },
        },
      },
    },
  });
const withPromise = invoking(fromPromise(({ input }) => work(input)));
const withEffect = invoking(effectActor('call', (effects, input) => effects.call(input)));
const evented = setup({}).createMachine({
  context: { n: 0 },
  initial: 'idle',
  states: {
    idle: { on: { GO: 'calling' } },
    calling: { on: { DONE: { target: 'idle', actions: assign({ n: ({ event }) => event.output }) } } },
  },
});

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
/** Resolves when the actor is back in idle (after `send`, if given). */
const backToIdle = (actor, send) =>
  new Promise((resolve) => {
    const sub = actor.subscribe((s) => {
      if (s.value === 'idle') {
        sub.unsubscribe();
        resolve();
      }
    });
    send?.();
  });

async function invoked(machine, n, bound) {
  const actor = createActor(machine);
  if (bound) bindAgentEffects(actor, { call: work });
  actor.start();
  for (let i = 0; i < n; i++) {
    actor.send({ type: 'GO' });
    await backToIdle(actor);
  }
  actor.stop();
}
async function outside(n) {
  const actor = createActor(evented).start();
  for (let i = 0; i < n; i++) {
    actor.send({ type: 'GO' });
    const output = await work({ n: actor.getSnapshot().context.n });
    await backToIdle(actor, () => actor.send({ type: 'DONE', output }));
  }
  actor.stop();
}
const perCall = async (run) => {
  const c0 = cpuMs();
  await run();
  return ((cpuMs() - c0) / calls) * 1000;
};

process.stdout.write(`CPU us a call (${calls} calls a round), ${dist}\n`);
for (let round = 1; round <= rounds; round++) {
  const p = await perCall(() => invoked(withPromise, calls, false));
  const e = await perCall(() => invoked(withEffect, calls, true));
  const o = await perCall(() => outside(calls));
  process.stdout.write(
    `round ${round}: fromPromise ${p.toFixed(1)} | effectActor ${e.toFixed(1)} | no actor ${o.toFixed(1)} | an effect actor's own ${(e - o).toFixed(1)}\n`,
  );
}
