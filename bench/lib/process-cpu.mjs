// CPU time of processes from /proc (Linux), for the Postgres bench's profile: the cluster (postmaster,
// its live backends and the ones that ended) and any pid.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** A process's CPU ticks from /proc: its own, its ended children's, and its parent's pid. */
export function procStat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // fields after the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14)
    return {
      ppid: Number(f[1]),
      own: Number(f[11]) + Number(f[12]),
      children: Number(f[13]) + Number(f[14]),
    };
  } catch {
    return undefined;
  }
}

/** CPU milliseconds used so far by a process (its own, not its children's). */
export function cpuMsOf(pid) {
  return (procStat(pid)?.own ?? 0) * TICK_MS;
}

/** CPU milliseconds used so far by the cluster in `dir` (startPostgresCluster's): every process of it. */
export function clusterCpuMs(dir) {
  const pid = Number(readFileSync(path.join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const main = procStat(pid);
  if (!main) return 0;
  let ticks = main.own + main.children;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = procStat(entry);
    if (s?.ppid === pid) ticks += s.own;
  }
  return ticks * TICK_MS;
}

/**
 * CPU milliseconds used so far by one thread (Linux's schedstat, nanoseconds): by default this
 * process's main thread, where the agent, the endpoint and the SDK run (V8's compiler and GC helper
 * threads, which `process.cpuUsage()` counts too, left out). Undefined where there is no schedstat.
 */
export function threadCpuMs(pid = process.pid, tid = pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return undefined;
  }
}

/** CPU milliseconds used so far by every thread of a process (schedstat: finer than `cpuMsOf`'s 10 ms ticks). */
export function processCpuMsFine(pid) {
  let ms = 0;
  let tasks;
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  for (const tid of tasks) ms += threadCpuMs(pid, tid) ?? 0;
  return ms;
}

/**
 * A thread's context switches so far (Linux's /proc status), by default this process's main thread:
 * `voluntary` counts the times it went to sleep (waiting for I/O, a timer, a lock), `involuntary` the
 * times the scheduler took its CPU while it ran. Each sleep on a busy machine costs the thread its
 * caches' contents (bench/step-wait-cpu.mjs). Undefined where there is no /proc.
 */
export function threadSwitches(pid = process.pid, tid = pid) {
  try {
    const text = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
    return {
      voluntary: Number(/\nvoluntary_ctxt_switches:\s+(\d+)/.exec(text)?.[1]),
      involuntary: Number(/\nnonvoluntary_ctxt_switches:\s+(\d+)/.exec(text)?.[1]),
    };
  } catch {
    return undefined;
  }
}
