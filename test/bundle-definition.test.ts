import { cp, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { bundleDefinitionName } from '../src/bundle/index.js';
import {
  AgentRegistry,
  type BundleAgent,
  createAgent,
  defineAgent,
  loadBundleAgent,
  renderInstructions,
  subagentTool,
  toAgentOptions,
} from '../src/index.js';
import { type ScriptedServer, type ScriptedTurn, startScriptedServer } from '../src/testing/index.js';
import { assertToolCallsAnswered } from './support/harness.js';

const EXAMPLE = path.resolve(import.meta.dirname, '..', 'bundles', 'requirements-workflow');

/** A second agent for the example bundle: a persona name with spaces and a `${...}` in its prompt. */
const COACH = `# Quality Coach

\`\`\`xml
<agent id="requirements-workflow/agents/quality-coach.md" name="Quinn the Questioner" title="Quality Coach" icon="🔎">
  <persona>
    <role>Asks what could go wrong</role>
    <identity>Reviews requirements before they are built.</identity>
    <communication_style>Short questions, one at a time.</communication_style>
    <principles>Quote the ticket as \${TICKET_ID} in every answer.</principles>
  </persona>
  <critical-actions>
    <i>Load into memory {bundle-root}/config.yaml and set variables: project_name, output_folder, user_name</i>
  </critical-actions>
  <cmds>
    <c cmd="*help">Show the numbered command list</c>
    <c cmd="*exit">Leave the coach persona</c>
  </cmds>
</agent>
\`\`\`
`;

let dir: string;
let bundleRoot: string;
let projectRoot: string;
let server: ScriptedServer | undefined;

beforeEach(async () => {
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'agentloop-bundle-def-')));
  bundleRoot = path.join(dir, 'bundle');
  projectRoot = path.join(dir, 'project');
  await cp(EXAMPLE, bundleRoot, { recursive: true });
  await writeFile(path.join(bundleRoot, 'agents', 'quality-coach.md'), COACH);
  await mkdir(projectRoot);
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

const load = (agent: string): Promise<BundleAgent> => loadBundleAgent({ bundleRoot, agent, projectRoot });
const systemText = (request: { messages: { role: string; content?: unknown }[] }) =>
  String(request.messages[0]?.content);
const toolNames = (request: { tools?: unknown[] }) =>
  (request.tools ?? []).map((t) => (t as { function: { name: string } }).function.name);

describe('a loaded bundle agent', () => {
  it('is an AgentDefinition that defineAgent accepts, with what UIs need beside it', async () => {
    const iris = await load('intake-facilitator');
    expect(defineAgent(iris.definition)).toBe(iris.definition);
    expect(iris.definition).toMatchObject({
      name: 'Iris',
      description: 'Requirements intake facilitator for small product teams',
    });
    expect(iris.definition.instructions).toContain('You are Iris 🧭, Requirements Intake Facilitator.');
    expect(iris.definition.contextMessages[0]?.content.split('\n')[0]).toBe(
      `[Critical Action] Loaded file: ${path.join(bundleRoot, 'config.yaml')}`,
    );
    expect(iris.definition.tools.map((t) => t.name)).toEqual([
      'read_file',
      'execute_workflow',
      'save_output',
    ]);
    // The definition's fields live once, in the definition.
    for (const key of ['instructions', 'contextMessages', 'tools', 'description']) {
      expect(Object.keys(iris)).not.toContain(key);
    }
    expect([iris.name, iris.icon, iris.agentFile.name, iris.menu.length]).toEqual(['Iris', '🧭', 'Iris', 5]);
    expect(iris.greeting).toContain('Hello Friend!');
  });

  it('runs through toAgentOptions and createAgent against the scripted server (the README example)', async () => {
    const iris = await loadBundleAgent({ bundleRoot, agent: 'intake-facilitator', projectRoot });
    server = await startScriptedServer({
      scenario: {
        turns: [
          {
            toolCalls: [
              { name: 'save_output', arguments: { file_path: '{output_folder}/note.md', content: '# Note' } },
            ],
          },
          { content: 'Saved the note.' },
        ],
      },
    });
    vi.stubEnv('OPENAI_BASE_URL', server.url);
    vi.stubEnv('OPENAI_API_KEY', 'test');
    const agent = createAgent(toAgentOptions(iris.definition));
    const result = await agent.send('save a note');
    agent.stop();
    expect(result).toMatchObject({
      success: true,
      response: 'Saved the note.',
      terminateReason: 'completed',
    });
    assertToolCallsAnswered(result.messages);
    const request = server.requests[0]!;
    expect(request.messages.slice(0, 1 + iris.definition.contextMessages.length)).toEqual([
      { role: 'system', content: iris.definition.instructions },
      ...iris.definition.contextMessages,
    ]);
    expect(toolNames(request)).toEqual(
      expect.arrayContaining(['read_file', 'execute_workflow', 'save_output']),
    );
    expect(await readFile(path.join(projectRoot, 'docs', 'requirements', 'note.md'), 'utf8')).toBe('# Note');
  });

  it('registers in an AgentRegistry and runs as a subagent through subagentTool', async () => {
    const registry = new AgentRegistry();
    for (const id of ['intake-facilitator', 'quality-coach']) registry.register((await load(id)).definition);
    expect(registry.getAll().map((d) => d.name)).toEqual(['Iris', 'quality-coach']);

    const respond = (
      request: { messages: { role: string; content?: unknown }[] },
      index: number,
    ): ScriptedTurn => {
      if (systemText(request).startsWith('You are Iris')) {
        return index === 0
          ? {
              toolCalls: [
                {
                  name: 'save_output',
                  arguments: { file_path: '{output_folder}/intake.md', content: '# Intake: Promise Tracker' },
                },
              ],
            }
          : { content: 'Saved the intake to {output_folder}/intake.md.' };
      }
      return index === 0
        ? { toolCalls: [{ name: 'Iris', arguments: { task: 'Write down the Promise Tracker intake' } }] }
        : { content: 'Iris wrote the intake.' };
    };
    server = await startScriptedServer({ respond });
    const runtime = { baseURL: server.url, apiKey: 'test' };
    const children: string[] = [];
    const lead = createAgent({
      ...runtime,
      sessionId: 'lead',
      instructions: 'You delegate requirements work.',
      tools: [
        subagentTool(registry.require('Iris'), {
          runtime,
          onChild: (child) => {
            children.push(child.sessionId);
            return undefined;
          },
        }),
      ],
    });
    const result = await lead.send('Get the intake written');
    lead.stop();
    expect(result.response).toBe('Iris wrote the intake.');
    assertToolCallsAnswered(result.messages);
    expect(result.messages.find((m) => m.role === 'tool')).toMatchObject({
      content: 'Saved the intake to {output_folder}/intake.md.',
    });
    expect(children).toEqual(['lead/Iris/call_0_0']);
    expect(toolNames(server.requests[0]!)).toContain('Iris');
    const childRequest = server.requests.find((r) => systemText(r).startsWith('You are Iris'))!;
    expect(childRequest.messages.at(-1)).toMatchObject({
      role: 'user',
      content: 'Write down the Promise Tracker intake',
    });
    expect(await readFile(path.join(projectRoot, 'docs', 'requirements', 'intake.md'), 'utf8')).toBe(
      '# Intake: Promise Tracker',
    );
  });

  it('gets a definition name from its file stem when the persona name has spaces; dollar-brace text in its prompt stays as written', async () => {
    const coach = await load('quality-coach');
    expect([coach.definition.name, coach.name, coach.title]).toEqual([
      'quality-coach',
      'Quinn the Questioner',
      'Quality Coach',
    ]);
    expect(defineAgent(coach.definition)).toBe(coach.definition);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the bundle's text, not a placeholder.
    const literal = 'Quote the ticket as ${TICKET_ID} in every answer.';
    expect(renderInstructions(coach.definition)).toContain(literal);

    server = await startScriptedServer({ scenario: { turns: [{ content: 'Which ticket?' }] } });
    const agent = createAgent(
      toAgentOptions(coach.definition, {}, { baseURL: server.url, apiKey: 'test', name: coach.name }),
    );
    expect((await agent.send('review this')).response).toBe('Which ticket?');
    agent.stop();
    expect(systemText(server.requests[0]!)).toContain(literal);
    expect(systemText(server.requests[0]!)).not.toContain('\\$');
  });
});

describe('bundleDefinitionName', () => {
  it('keeps a valid persona name, else makes the id or file stem valid', () => {
    expect(bundleDefinitionName({ name: 'Bob', id: 'bmad/bmm/agents/sm.md', file: '/x/sm.md' })).toBe('Bob');
    expect(
      bundleDefinitionName({ name: 'BMad Master', id: 'bmad/core/agents/bmad-master.md', file: '/x/a.md' }),
    ).toBe('bmad-master');
    expect(bundleDefinitionName({ name: 'A B', id: '', file: '/x/My Agent (v2).md' })).toBe('My-Agent-v2');
    expect(bundleDefinitionName({ name: '', id: '***', file: '/x/+++.md' })).toBe('agent');
    const long = bundleDefinitionName({ name: 'x y', id: `${'a'.repeat(63)} b.md`, file: '' });
    expect(long).toBe('a'.repeat(63));
    expect(bundleDefinitionName({ name: 'x y', id: `${'a'.repeat(70)}.md`, file: '' })).toHaveLength(64);
  });
});
