// Issue 36 (dbos36c): where the wall time of one DBOS turn goes, phase by phase, for
// bench/dbos-turn-timeline.mjs `--probe`. Bench-only: it wraps `DBOS.runStep` (each step's call, its
// function's start and end, its return), `globalThis.fetch` (the model request's start and its
// response headers), the in-process HTTP servers' requests (the scripted model server: request in,
// response flushed), and a pool's `connect` (how long a statement waited for a connection). Nothing of
// agentloop is patched: the adapter calls `DBOS.runStep` and the agent the SDK's `fetch` as always.
import http from 'node:http';
import { constants, PerformanceObserver, performance } from 'node:perf_hooks';

/** Marks of the session being probed: [ms, what, detail, ms the event loop was busy so far, us]. */
let marks = [];
/** Connection waits of the session being probed: [pool, ms waited]. */
let waits = [];
/** Garbage collections since the probe was installed: [start ms, duration ms, major]. */
const gcs = [];
/** The garbage collections that started between `from` and `to` (performance.now() ms). */
export const gcsWithin = (from, to) => gcs.filter((g) => g[0] >= from && g[0] <= to);

/** Records a mark now. */
export const mark = (what, detail) => {
  marks.push([
    performance.now(),
    what,
    detail,
    performance.eventLoopUtilization().active,
    // The monotonic clock in us, that of a V8 CPU profile's samples (bench/lib/profile-windows.mjs).
    Number(process.hrtime.bigint() / 1000n),
  ]);
};

/** Starts a new session's marks; returns the last session's marks and connection waits. */
export function takeMarks() {
  const out = { marks, waits };
  marks = [];
  waits = [];
  return out;
}

/**
 * Wraps `DBOS.runStep`, `globalThis.fetch` and `http.Server`'s requests with marks. Call before any
 * agent is made (the `openai` SDK reads `globalThis.fetch` when its client is made).
 */
export function installProbe(DBOS) {
  // Each garbage collection, as the session running then saw it (scavenges and the rest).
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      gcs.push([e.startTime, e.duration, e.detail?.kind !== constants.NODE_PERFORMANCE_GC_MINOR]);
  }).observe({ entryTypes: ['gc'] });
  const runStep = DBOS.runStep;
  DBOS.runStep = (func, config = {}) => {
    const name = config.name ?? func.name;
    mark('step-call', name);
    return runStep
      .call(
        DBOS,
        async () => {
          mark('fn-start', name);
          try {
            return await func();
          } finally {
            mark('fn-end', name);
          }
        },
        config,
      )
      .finally(() => mark('step-ret', name));
  };
  const fetch = globalThis.fetch;
  globalThis.fetch = async (...args) => {
    mark('fetch');
    const response = await fetch(...args);
    mark('headers');
    return response;
  };
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, ...args) {
    if (event === 'request') {
      mark('srv-req');
      args[1].on('finish', () => mark('srv-end'));
    }
    return emit.call(this, event, ...args);
  };
}

/** Times every `connect` of `pool` (its `query` goes through it): a wait over 0.05 ms is recorded. */
export function probePool(name, pool) {
  const connect = pool.connect.bind(pool);
  pool.connect = (callback) => {
    const t0 = performance.now();
    const waited = () => {
      const ms = performance.now() - t0;
      if (ms > 0.05) waits.push([name, ms, pool.waitingCount, pool.totalCount]);
    };
    if (typeof callback === 'function') {
      return connect((err, client, release) => {
        waited();
        callback(err, client, release);
      });
    }
    return connect().then((client) => {
      waited();
      return client;
    });
  };
}

/** A step's statements before its function runs: the cancel check, then the status and record reads. */
const STEP_PRE = [
  ['status', /^SELECT status FROM/],
  ['record', /^SELECT output, error, child_workflow_id/],
];
/** A step's record: a transaction with the owner's lock and the insert. */
const STEP_POST = [
  ['begin', /^BEGIN ISOLATION LEVEL READ COMMITTED$/],
  ['owner', /^SELECT owner_xid/],
  ['insert', /^INSERT INTO "dbos".operation_outputs/],
  ['commit', /^COMMIT$/],
];
/** DBOS's polls: the queue's claim, the application version's read, the result's poll. */
const POLLS = /^(WITH RECURSIVE partitions|SELECT version_name|SELECT ws\.status)/;

/**
 * A session's phases from its marks (and, for a DBOS turn, its window `from`..`to` and the statements
 * logged in it: [pool, start, end, sql]). Steps that overlap form a round (a batch's tool calls).
 * Per round: `react` (the previous round's return, or the window's start, to this round's first
 * step call: the machine's reaction and the adapter's code between steps), `pre` (step call to its
 * function's start: DBOS's checks), `fn` (the function: the effect), `post` (function end to the
 * step's return: DBOS's record); a model round's `fn` split into `lead` (to the request),
 * `http` (request to the server's response flushed) and `tail` (to the function's end: the stream
 * read and the record's JSON). `head`: window start to the first step; `end`: last return to the
 * window's end. In process (no steps): `http` per model call and `gap` between calls.
 */
export function probedPhases({ marks: ms, from, to, statements = [] }) {
  const steps = [];
  const open = new Map();
  const fetches = [];
  // The event loop's busy time (ms, cumulative) at each mark's time.
  const busyAt = new Map(ms.map(([t, , , b]) => [t, b]));
  const busy = (a, b) => busyAt.get(b) - busyAt.get(a);
  for (const [t, what, detail] of ms) {
    if (what === 'step-call') {
      const s = { name: detail, call: t };
      steps.push(s);
      open.set(detail, s);
    } else if (what === 'fn-start') open.get(detail).start = t;
    else if (what === 'fn-end') open.get(detail).end = t;
    else if (what === 'step-ret') open.get(detail).ret = t;
    else if (what === 'fetch') fetches.push({ fetch: t });
    else if (what === 'headers') fetches.at(-1).headers = t;
    else if (what === 'srv-end') {
      const f = fetches.at(-1);
      if (f) f.srvEnd = t;
    }
  }
  const out = {};
  const add = (key, v) => {
    if (Number.isFinite(v)) out[key] = (out[key] ?? 0) + v;
  };
  if (steps.length === 0) {
    // In process: the model calls and what lies between them.
    const t0 = from ?? fetches[0]?.fetch;
    add('lead', fetches[0]?.fetch - t0);
    fetches.forEach((f, i) => {
      add('model.http', f.srvEnd - f.fetch);
      add('model.http.busy', busy(f.fetch, f.srvEnd));
      if (i > 0) {
        add('model.gap', f.fetch - fetches[i - 1].srvEnd);
        add('model.gap.busy', busy(fetches[i - 1].srvEnd, f.fetch));
      }
    });
    if (to !== undefined) add('end', to - fetches.at(-1)?.srvEnd);
    return out;
  }
  const rounds = [];
  for (const s of steps) {
    const r = rounds.at(-1);
    if (r && s.call < r.ret) r.steps.push(s);
    else rounds.push({ steps: [s], call: s.call, ret: s.ret });
    const last = rounds.at(-1);
    last.ret = Math.max(last.ret, s.ret);
  }
  add('head', rounds[0].call - from);
  rounds.forEach((r, i) => {
    const kind = r.steps.some((s) => /\/model$/.test(s.name)) ? 'model' : 'tool';
    const start = Math.min(...r.steps.map((s) => s.start));
    const end = Math.max(...r.steps.map((s) => s.end));
    const startAt = r.steps.find((s) => s.start === start).start;
    const endAt = r.steps.find((s) => s.end === end).end;
    if (i > 0) {
      add(`${kind}.react`, r.call - rounds[i - 1].ret);
      add(`${kind}.react.busy`, busy(rounds[i - 1].ret, r.call));
    }
    add(`${kind}.pre`, start - r.call);
    add(`${kind}.pre.busy`, busy(r.call, startAt));
    add(`${kind}.fn`, end - start);
    add(`${kind}.fn.busy`, busy(startAt, endAt));
    add(`${kind}.post`, r.ret - end);
    add(`${kind}.post.busy`, busy(endAt, r.ret));
    // The statements of DBOS's system pool in the round's pre and post phases: their summed time
    // (call to result, as `pg` reports it to the caller) and count; the rest of the phase is Node's.
    const within = (a, b) => statements.filter((e) => e[0] === 'sys' && e[1] >= a && e[2] <= b);
    const pre = within(r.call, start);
    const post = within(end, r.ret);
    add(
      `${kind}.pre.sql`,
      pre.reduce((x, e) => x + e[2] - e[1], 0),
    );
    add(`${kind}.pre.n`, pre.length);
    add(
      `${kind}.post.sql`,
      post.reduce((x, e) => x + e[2] - e[1], 0),
    );
    add(`${kind}.post.n`, post.length);
    // The step's own statements by kind (the first of each kind in the phase: the step's, not a poll's).
    for (const [phase, list, kinds] of [
      ['pre', pre, STEP_PRE],
      ['post', post, STEP_POST],
    ]) {
      for (const [k, re] of kinds) {
        const e = list.find((x) => re.test(x[3]));
        if (e) add(`${kind}.${phase}.${k}`, e[2] - e[1]);
      }
      add(`${kind}.${phase}.polls`, list.filter((x) => POLLS.test(x[3])).length);
    }
    if (kind === 'model') {
      const f = fetches.find((x) => x.fetch >= start && x.fetch <= end);
      if (f) {
        add('model.lead', f.fetch - start);
        add('model.http', f.srvEnd - f.fetch);
        add('model.http.busy', busy(f.fetch, f.srvEnd));
        add('model.tail', end - f.srvEnd);
        add('model.tail.busy', busy(f.srvEnd, endAt));
      }
    }
  });
  add('end', to - rounds.at(-1).ret);
  // The adapter's end: from the last step's return to its end statement (the agent's last reaction,
  // the turn loop's wake-ups, the snapshot), the statement, and DBOS's record of the output after it.
  const last = rounds.at(-1).ret;
  const app = statements.find((e) => e[0] === 'app' && e[1] >= last && e[2] <= to);
  if (app) {
    add('end.toApp', app[1] - last);
    add('end.app', app[2] - app[1]);
    add('end.afterApp', to - app[2]);
  }
  const first = statements.find((e) => e[0] === 'app' && e[1] >= from && e[2] <= rounds[0].call);
  if (first) {
    add('head.toApp', first[1] - from);
    add('head.app', first[2] - first[1]);
    add('head.afterApp', rounds[0].call - first[2]);
  }
  out.rounds = rounds.length;
  return out;
}

/**
 * A session's phases as windows of the monotonic clock (us), for a CPU profile taken meanwhile:
 * [phase, start, end], phases as {@link probedPhases} names them (steps' `pre`, `fn`, `post`,
 * `react` by round kind; the model request `http` and `tail`).
 */
export function probedWindows(ms, statements = []) {
  const out = [];
  // The step's first statement after its call and after its function's end, as windows too.
  const offset = ms.length ? ms[0][4] - ms[0][0] * 1000 : 0;
  const firstAfter = (t, re) => statements.find((e) => e[0] === 'sys' && e[1] >= t && re.test(e[3]));
  for (const [t, what, detail] of ms) {
    const kind = detail && /\/model$/.test(detail) ? 'model' : 'tool';
    const e =
      what === 'step-call'
        ? firstAfter(t, STEP_PRE[0][1])
        : what === 'fn-end'
          ? firstAfter(t, STEP_POST[0][1])
          : undefined;
    if (e && Number.isFinite(e[2]))
      out.push([
        `${kind}.${what === 'step-call' ? 'pre.status' : 'post.begin'}`,
        e[1] * 1000 + offset,
        e[2] * 1000 + offset,
      ]);
  }
  const by = new Map();
  let last;
  let fetchAt;
  let srvEnd;
  for (const [, what, detail, , us] of ms) {
    const kind = detail && /\/model$/.test(detail) ? 'model' : 'tool';
    if (what === 'step-call') {
      if (last && !by.size) out.push([`${kind}.react`, last, us]);
      by.set(detail, us);
    } else if (what === 'fn-start') {
      out.push([`${kind}.pre`, by.get(detail), us]);
      by.set(detail, us);
    } else if (what === 'fn-end') {
      out.push([`${kind}.fn`, by.get(detail), us]);
      if (kind === 'model' && srvEnd !== undefined) out.push(['model.tail', srvEnd, us]);
      by.set(detail, us);
    } else if (what === 'step-ret') {
      out.push([`${kind}.post`, by.get(detail), us]);
      by.delete(detail);
      last = us;
    } else if (what === 'fetch') fetchAt = us;
    else if (what === 'srv-end') {
      srvEnd = us;
      if (fetchAt !== undefined) out.push(['model.http', fetchAt, us]);
    }
    // In process (no steps): from a model response's end to the next request.
    if (what === 'fetch' && srvEnd !== undefined && by.size === 0 && last === undefined)
      out.push(['model.gap', srvEnd, us]);
  }
  return out;
}
