import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from 'xstate';
import { z } from 'zod';
import { type Agent, defineTool, FileSessionStore, MemorySessionStore } from '../src/index.js';
import { CrashableStore } from './support/crashable-store.js';
import { agentAt, assertToolCallsAnswered, serve } from './support/harness.js';
import { testServer } from './support/mcp-servers.js';
import { skillText, tempDir, writeSkill } from './support/skill-tree.js';

// Skills through the whole runtime: the real openai SDK over HTTP to the scripted server, real skill
// folders in temp dirs, the file session store for the resume.

/** A project with one skill whose `references/style.md` shadows the project's own file of that name. */
async function project() {
  const root = await tempDir('agentloop-skills-run-');
  const outside = await tempDir('agentloop-skills-outside-');
  await writeFile(path.join(outside, 'secret.txt'), 'OUTSIDE SECRET');
  const skillDir = await writeSkill(
    path.join(root, '.agents/skills'),
    'report-writer',
    skillText(
      { name: 'report-writer', description: 'Write short reports in the house style', license: 'MIT' },
      'SKILL BODY: read [the style](references/style.md) first, then run `scripts/count.sh`.',
    ),
    { 'references/style.md': 'SKILL STYLE', 'scripts/count.sh': 'wc -w "$1"\n' },
  );
  await symlink(path.join(outside, 'secret.txt'), path.join(skillDir, 'references', 'escape.md'));
  await mkdir(path.join(root, 'references'));
  await writeFile(path.join(root, 'references', 'style.md'), 'PROJECT STYLE');
  await writeFile(path.join(root, 'README.md'), 'PROJECT README');
  await mkdir(path.join(root, 'notes'));
  await writeFile(path.join(root, 'notes', 'report-writer.md'), 'NOTES FOR THE SKILL');
  return { root, skillDir, outside };
}

const read = (file_path: string) => ({ name: 'read_file', arguments: { file_path } });

/** The tool messages of a conversation, by call id. */
function toolResults(agent: Agent): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of agent.messages) if (m.role === 'tool') out.set(m.tool_call_id, String(m.content));
  return out;
}

describe('an agent with skills', () => {
  it('lists the catalog, activates a skill, resolves read_file from it, refuses symlinks out, saves output', async () => {
    const { root, skillDir } = await project();
    const server = await serve({
      turns: [
        { toolCalls: [{ id: 'before', ...read('references/style.md') }] },
        { toolCalls: [{ id: 'unknown', name: 'activate_skill', arguments: { name: 'nope' } }] },
        { toolCalls: [{ id: 'act', name: 'activate_skill', arguments: { name: 'report-writer' } }] },
        {
          toolCalls: [
            { id: 'rel', ...read('references/style.md') },
            { id: 'fallback', ...read('README.md') },
            { id: 'skillroot', ...read('{skill-root}/references/style.md') },
            { id: 'projroot', ...read('{project-root}/references/style.md') },
            { id: 'name', ...read('notes/{skill-name}.md') },
            { id: 'escape', ...read('references/escape.md') },
            { id: 'abs-out', ...read('/etc/hostname') },
          ],
        },
        {
          toolCalls: [
            { id: 'save', name: 'save_output', arguments: { file_path: 'report.md', content: '# R' } },
          ],
        },
        { content: 'Done.' },
      ],
    });
    const agent = agentAt(server, { instructions: 'You help.', skills: { projectRoot: root } });
    const result = await agent.send('write a report');
    expect(result.response).toBe('Done.');
    assertToolCallsAnswered(agent.messages);

    const system = String(server.requests[0]!.messages[0]!.content);
    expect(system).toMatch(/^You help\.\n\nAGENT SKILLS/);
    expect(system).toContain('<name>report-writer</name>');
    expect(system).toContain('Write short reports in the house style');
    expect(system).not.toContain('SKILL BODY');
    expect(system).toMatch(/never runs scripts/);
    const tools = server.requests[0]!.tools!.map((t) => (t as { function: { name: string } }).function.name);
    expect(tools).toEqual(expect.arrayContaining(['activate_skill', 'read_file', 'save_output']));

    const results = toolResults(agent);
    expect(JSON.parse(results.get('before')!).content).toBe('PROJECT STYLE');
    expect(results.get('unknown')).toMatch(/^Error: Unknown skill "nope"\. Skills: report-writer$/);
    const activation = JSON.parse(results.get('act')!);
    expect(activation).toMatchObject({
      activated: 'report-writer',
      folder: '.agents/skills/report-writer',
      resources: ['references/escape.md', 'references/style.md', 'scripts/count.sh'],
    });
    expect(activation.instructions).toBe(
      'SKILL BODY: read [the style](references/style.md) first, then run `scripts/count.sh`.\n',
    );
    expect(activation.scripts).toMatch(/never runs scripts/);
    expect(JSON.parse(results.get('rel')!)).toMatchObject({
      content: 'SKILL STYLE',
      path: path.join(skillDir, 'references/style.md'),
    });
    expect(JSON.parse(results.get('fallback')!).content).toBe('PROJECT README');
    expect(JSON.parse(results.get('skillroot')!).content).toBe('SKILL STYLE');
    expect(JSON.parse(results.get('projroot')!).content).toBe('PROJECT STYLE');
    expect(JSON.parse(results.get('name')!).content).toBe('NOTES FOR THE SKILL');
    expect(results.get('escape')).toMatch(
      /^Error: Access denied: .*escape\.md resolves to .*secret\.txt, outside/,
    );
    expect(results.get('escape')).not.toContain('OUTSIDE SECRET');
    expect(results.get('abs-out')).toMatch(/^Error: Access denied/);
    expect(JSON.parse(results.get('save')!)).toMatchObject({ success: true });
    expect(await readFile(path.join(root, 'output', 'report.md'), 'utf8')).toBe('# R');
    expect(agent.skills?.skills.map((s) => s.name)).toEqual(['report-writer']);
  });

  it('says no skill is active when {skill-root} is used before activation, naming the skills to activate', async () => {
    const { root } = await project();
    const server = await serve({
      turns: [{ toolCalls: [{ id: 'r', ...read('{skill-root}/references/style.md') }] }, { content: 'ok' }],
    });
    const agent = agentAt(server, { skills: { projectRoot: root } });
    await agent.send('go');
    expect(toolResults(agent).get('r')).toMatch(
      /uses \{skill-root\} but no skill is active; call activate_skill first \(skills available: report-writer\)/,
    );
  });

  it('still knows the active skill after the session is resumed from the store', async () => {
    const { root } = await project();
    const store = new FileSessionStore({ projectRoot: root });
    const first = await serve({
      turns: [
        { toolCalls: [{ id: 'act', name: 'activate_skill', arguments: { name: 'report-writer' } }] },
        { content: 'Activated.' },
      ],
    });
    const before = agentAt(first, { store, session: 'skills-1', skills: { projectRoot: root } });
    expect((await before.send('use the report skill')).response).toBe('Activated.');
    await before.flush();
    before.stop();

    // A new process: a new agent, the same session. Its next turn reads a relative path.
    const second = await serve({
      turns: [
        {},
        {},
        { toolCalls: [{ id: 'again', ...read('references/style.md') }] },
        { content: 'Read it.' },
      ],
    });
    const after = agentAt(second, { store, session: 'skills-1', skills: { projectRoot: root } });
    expect((await after.send('now read the style')).response).toBe('Read it.');
    expect(JSON.parse(toolResults(after).get('again')!).content).toBe('SKILL STYLE');
    // The conversation came back from the store: the activation is in it, not made again.
    expect(
      second.requests[0]!.messages.some(
        (m) => m.role === 'tool' && String(m.content).startsWith('{"activated"'),
      ),
    ).toBe(true);
  });

  it('knows the active skill after a crash between rest points (the transcript holds the activation)', async () => {
    const { root } = await project();
    const server = await serve({
      turns: [
        {
          toolCalls: [
            { id: 'act', name: 'activate_skill', arguments: { name: 'report-writer' } },
            { id: 'hold', name: 'hold', arguments: {} },
          ],
        },
        { toolCalls: [{ id: 'after', ...read('references/style.md') }] },
        { content: 'Resumed.' },
      ],
    });
    const hold = defineTool({
      name: 'hold',
      description: 'never ends',
      parameters: z.object({}),
      execute: () => new Promise<never>(() => {}),
    });
    const inner = new MemorySessionStore();
    const store = new CrashableStore(inner);
    const first = agentAt(server, {
      store,
      session: 'crash-1',
      tools: [hold],
      skills: { projectRoot: root },
    });
    await first.ready();
    // The turn never ends: the process "dies" in it.
    first.send('start').catch(() => {});
    await waitFor(first.actor, (s) => s.matches('ExecutingTool') && 'act' in s.context.batch.results);
    await first.flush();
    store.crash();
    first.stop();
    // The last save is from before the turn: the activation is only in the transcript.
    expect(JSON.stringify((await inner.load('crash-1'))!.snapshot)).not.toContain('"activated"');

    const second = agentAt(server, {
      store: inner,
      session: 'crash-1',
      tools: [hold],
      skills: { projectRoot: root },
    });
    await second.ready();
    expect(second.state).toBe('Interrupted');
    expect((await second.send('go on')).response).toBe('Resumed.');
    expect(JSON.parse(toolResults(second).get('after')!).content).toBe('SKILL STYLE');
  });

  it('starts with problems reported when every skill is broken', async () => {
    const root = await tempDir('agentloop-skills-broken-');
    await writeSkill(path.join(root, '.claude/skills'), 'bad', '---\nname: [\n---\n');
    const server = await serve({ turns: [{ content: 'Hello.' }] });
    const agent = agentAt(server, { instructions: 'Plain.', skills: { projectRoot: root } });
    expect((await agent.send('hi')).response).toBe('Hello.');
    expect(agent.skills?.problems.map((p) => [p.kind, p.key])).toEqual([['frontmatter', 'frontmatter']]);
    expect(String(server.requests[0]!.messages[0]!.content)).toBe('Plain.');
  });

  it('skills, MCP servers and the plan together: one registry, the catalog in the system prompt', async () => {
    const { root } = await project();
    const log = path.join(await tempDir('agentloop-skills-mcp-'), 'server.log');
    await writeFile(log, '');
    const server = await serve({
      turns: [
        { toolCalls: [{ id: 'act', name: 'activate_skill', arguments: { name: 'report-writer' } }] },
        { toolCalls: [{ id: 'count', name: 'test__count', arguments: {} }] },
        { content: 'Both.' },
      ],
    });
    const agent = agentAt(server, {
      instructions: 'You help.',
      skills: { projectRoot: root },
      mcpServers: { test: testServer(log) },
    });
    try {
      expect((await agent.send('go')).response).toBe('Both.');
      assertToolCallsAnswered(agent.messages);
      expect(String(server.requests[0]!.messages[0]!.content)).toMatch(/^You help\.\n\nAGENT SKILLS/);
      const tools = server.requests[0]!.tools!.map(
        (t) => (t as { function: { name: string } }).function.name,
      );
      expect(tools).toEqual(
        expect.arrayContaining(['activate_skill', 'read_file', 'update_plan', 'test__count']),
      );
      const results = toolResults(agent);
      expect(JSON.parse(results.get('act')!).activated).toBe('report-writer');
      expect(results.get('count')).toMatch(/^count 1 from pid \d+$/);
    } finally {
      await agent.close();
    }
  });
});
