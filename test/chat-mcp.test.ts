import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, repoRoot } from './support/build-dist.js';
import { alive, everythingBin } from './support/mcp-servers.js';
import { Tmux } from './support/tmux.js';
import { waitUntil } from './support/wait-until.js';

/**
 * Issue 13's done-when in a real terminal (tmux): `agentloop chat --mcp-config mcp.json` without a
 * bundle, server-everything's tools in /tools, a read-only call unasked and a guarded one asked, the
 * server killed mid-call (an error result, and the next call works), and a ten-step plan ticking.
 */
const tmux = new Tmux('chat-mcp');
let work: string;

beforeAll(async () => {
  await buildDist();
  await mkdir(path.join(repoRoot, 'test-artifacts'), { recursive: true });
  work = await mkdtemp(path.join(repoRoot, 'test-artifacts', 'chat-mcp-'));
}, 180_000);

afterAll(async () => {
  tmux.killServer();
  await rm(work, { recursive: true, force: true, maxRetries: 5 });
});

/** The pids under `root` (its whole process tree) whose command line contains `marker`. */
function descendants(root: number, marker: string): number[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .flatMap((m) => (m ? [{ pid: Number(m[1]), ppid: Number(m[2]), args: m[3]! }] : []));
  const tree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of rows)
      if (tree.has(row.ppid) && !tree.has(row.pid)) {
        tree.add(row.pid);
        grew = true;
      }
  }
  return rows.filter((r) => tree.has(r.pid) && r.pid !== root && r.args.includes(marker)).map((r) => r.pid);
}

/** Bytes a process has read so far (Linux): an idle stdio server reads only the requests it gets. */
function bytesRead(pid: number): number {
  return Number(/^rchar:\s*(\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? Number.NaN);
}

const STEPS = Array.from({ length: 10 }, (_, i) => `step ${i + 1}`);
const planAt = (done: number) =>
  `{ steps: [${STEPS.map((s, i) => `{ step: "${s}", status: ${i < done ? 'completed' : i === done ? 'in_progress' : 'pending'} }`).join(', ')}] }`;

describe('chat with MCP servers and a plan', () => {
  it('lists MCP tools, asks only where it must, survives a killed server, and ticks a ten-step plan', async () => {
    const dir = path.join(work, 'flow');
    await mkdir(dir, { recursive: true });
    await writeFile(
      path.join(dir, 'mcp.json'),
      JSON.stringify({
        mcpServers: {
          everything: { command: process.execPath, args: [everythingBin, 'stdio', 'main-copy'] },
          guarded: {
            command: process.execPath,
            args: [everythingBin, 'stdio', 'guarded-copy'],
            approval: 'always',
          },
        },
      }),
    );
    const turns = [
      '  - toolCalls: [{ name: everything__echo, arguments: { message: "plain echo" } }]',
      '  - content: "Echoed without asking."',
      '  - toolCalls: [{ name: guarded__echo, arguments: { message: "guarded echo" } }]',
      '  - content: "Echoed after you allowed it."',
      '  - toolCalls: [{ name: everything__trigger-long-running-operation, arguments: { duration: 60, steps: 60 } }]',
      '  - content: "The operation failed: the server stopped."',
      '  - toolCalls: [{ name: everything__echo, arguments: { message: "after the restart" } }]',
      '  - content: "Echoed again after the restart."',
      ...Array.from(
        { length: 11 },
        (_, done) => `  - toolCalls: [{ name: update_plan, arguments: ${planAt(done)} }]`,
      ),
      '  - content: "All ten steps are done."',
    ];
    await writeFile(path.join(dir, 'scenario.yaml'), `turns:\n${turns.join('\n')}\n`);
    tmux.start(
      'flow',
      [
        'chat',
        '--mcp-config',
        'mcp.json',
        '--scenario',
        'scenario.yaml',
        '--project',
        dir,
        '--session',
        'mcp-1',
      ],
      { cwd: dir, columns: 160 },
    );
    await tmux.waitFor('flow', /you ›/, 20_000);

    tmux.type('flow', '/tools');
    let text = await tmux.waitFor('flow', /MCP server guarded \(ready, \d+ tools\)[\s\S]*you ›\s*$/);
    expect(text).toMatch(/update_plan runs /);
    // By the chat's own rule (save_output asks unless --yes), not only the tool's.
    expect(text).toMatch(/save_output asks /);
    expect(text).toMatch(/MCP server everything \(ready, \d+ tools\)/);
    expect(text).toMatch(/everything__echo runs Echoes back the input string/);
    expect(text).toMatch(/everything__toggle-simulated-logging asks /);
    expect(text).toMatch(/guarded__echo asks /);

    tmux.type('flow', 'echo please');
    text = await tmux.waitFor('flow', /Echoed without asking\.[\s\S]*you ›\s*$/);
    expect(text).toMatch(/✓ everything__echo plain echo .*Echo: plain echo/);
    expect(text).not.toMatch(/Allow\?/);

    tmux.type('flow', 'guarded echo please');
    await tmux.waitFor('flow', /Allow\? \[y\]es \/ \[n\]o \(reason\) \/ \[a\]lways for guarded__echo ›/);
    tmux.type('flow', 'y');
    text = await tmux.waitFor('flow', /Echoed after you allowed it\.[\s\S]*you ›\s*$/);
    expect(text).toMatch(/✓ guarded__echo guarded echo .*Echo: guarded echo/);

    const pane = Number(tmux.run('display-message', '-p', '-t', 'flow', '#{pane_pid}').trim());
    const [before] = descendants(pane, 'main-copy');
    expect(before).toBeGreaterThan(0);
    const readBefore = bytesRead(before!);
    tmux.type('flow', 'run the long operation');
    await tmux.waitFor('flow', /everything__trigger-long-running-operation \d/);
    // The spinner shows as the call starts, before its request reaches the server (its intent is written
    // to the transcript first). Killed before it read the request, the server is started again for the
    // call, which then runs its 60 s: kill it once it has read the request.
    await waitUntil(() => bytesRead(before!) > readBefore, 'the server to read the call');
    process.kill(before!, 'SIGKILL');
    text = await tmux.waitFor('flow', /The operation failed: the server stopped\.[\s\S]*you ›\s*$/);
    expect(text).toMatch(
      /✗ everything__trigger-long-running-operation .*MCP server "everything" stopped during the call/,
    );

    tmux.type('flow', 'echo again');
    text = await tmux.waitFor('flow', /Echoed again after the restart\.[\s\S]*you ›\s*$/, 15_000);
    expect(text).toMatch(/✓ everything__echo after the restart .*Echo: after the restart/);
    const [after] = descendants(pane, 'main-copy');
    expect(after).toBeGreaterThan(0);
    expect(after).not.toBe(before);

    tmux.type('flow', 'do the ten steps');
    text = await tmux.waitFor('flow', /All ten steps are done\.[\s\S]*you ›\s*$/, 20_000);
    expect(text).toMatch(/Plan · 0\/10 done\n\s+▸ step 1\n\s+○ step 2/);
    expect(text).toMatch(/Plan · 4\/10 done\n(\s+✔ step \d+\n){4}\s+▸ step 5/);
    expect(text).toMatch(/Plan · 10\/10 done\n(\s+✔ step \d+\n){10}/);

    const servers = [...descendants(pane, 'main-copy'), ...descendants(pane, 'guarded-copy')];
    expect(servers).toHaveLength(2);
    tmux.type('flow', '/exit');
    await tmux.waitFor('flow', /\[exit 0\]/, 15_000);
    // No server outlives the chat (orphans would have left the pane's tree: their pids are checked).
    expect(servers.filter(alive)).toEqual([]);
  }, 120_000);
});
