import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDate } from '../src/bundle/path-variables.js';
import { TokenCounter } from '../src/prompt/token-counter.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/scripted-server.js';
import { BMAD_TEST_USER, freshBmadProject } from './support/bmad-installs.js';
import { buildDist, repoRoot } from './support/build-dist.js';
import { Tmux } from './support/tmux.js';

/**
 * The issue's "done when", as a new user does it: a project where BMAD 6.12's own installer ran
 * (`bmad-method install --modules bmm --tools claude-code --yes`), then `agentloop chat --project .
 * --agent pm` in a real terminal (tmux). The model is the scripted server, started here so the test
 * sees every request; its turns make the calls a model would: activate bmad-prd, read a reference,
 * ask, save the PRD.
 */
const tmux = new Tmux('bmad6');
let project: string;
let server: ScriptedServer;

const PRD =
  '---\ntitle: Habit tracker\nstatus: draft\n---\n\n# PRD: Habit tracker\n\n- FR-1: Log a habit in one tap.\n';

beforeAll(async () => {
  await buildDist();
  project = await freshBmadProject('6.12');
  server = await startScriptedServer({
    scenario: {
      turns: [
        { toolCalls: [{ name: 'activate_skill', arguments: { name: 'bmad-prd' } }] },
        { toolCalls: [{ name: 'read_file', arguments: { file_path: 'assets/prd-template.md' } }] },
        { content: "📋 Let's start with a brain dump: what product is this PRD for, and who uses it?" },
        {
          toolCalls: [
            {
              name: 'save_output',
              arguments: {
                file_path: '{planning_artifacts}/prds/prd-{project_name}-{date}/prd.md',
                content: PRD,
              },
            },
          ],
        },
        { content: '📋 The draft PRD is saved under _bmad-output/planning-artifacts/prds/.' },
      ],
    },
  });
}, 180_000);

afterAll(async () => {
  tmux.killServer();
  await server?.close();
  if (project) await rm(path.dirname(project), { recursive: true, force: true });
});

describe('agentloop chat --project . --agent pm on a real BMAD 6.12 install', () => {
  it('greets as John with the menu, PRD activates bmad-prd, a reference loads on demand, the PRD is saved', async () => {
    const skills = await readdir(path.join(project, '.claude', 'skills'));
    expect(skills).toContain('bmad-agent-pm');
    const args = ['chat', '--project', '.', '--agent', 'pm', '--base-url', server.url];
    args.push('--api-key', 'test', '--model', 'scripted', '--yes');
    tmux.start('pm', args, { cwd: project, rows: 50 });

    const greeting = await tmux.waitFor('pm', /you ›/);
    expect(greeting).toContain(`📋 Hello ${BMAD_TEST_USER}! I'm John, your Product Manager.`);
    expect(greeting).toContain('1. [PRD] Create, update, or validate a PRD');
    expect(greeting).toContain('-> bmad-prd');
    expect(greeting).toContain('4. [CC]');
    expect(server.requests).toHaveLength(0);

    tmux.type('pm', 'PRD');
    // Answered as soon as the question shows, before the prompt is back: type-ahead is kept.
    await tmux.waitFor('pm', /brain dump/);
    tmux.type('pm', 'A habit tracker for busy parents');
    const end = await tmux.waitFor('pm', /draft PRD is saved/);
    expect(end).toMatch(/activate_skill bmad-prd/);
    expect(end).toMatch(/read_file assets\/prd-template\.md .*prd-template\.md \(\d+ bytes\)/);
    expect(end).toMatch(/save_output _bmad-output\/planning-artifacts\/prds\/prd-project-\S+ .*→ saved \(/);

    const saved = path.join(
      project,
      '_bmad-output/planning-artifacts/prds',
      `prd-project-${formatDate(new Date())}`,
      'prd.md',
    );
    expect(await readFile(saved, 'utf8')).toBe(PRD);

    // The menu code went out with the call it maps to; the skill's body and the reference came from disk.
    const [first, afterActivate, afterRead] = server.requests as unknown as {
      messages: ChatCompletionMessageParam[];
      tools: ChatCompletionFunctionTool[];
    }[];
    const system = String(first!.messages[0]!.content);
    expect(system).toContain('You are John 📋, Product Manager.');
    expect(system).toContain('activate_skill({ name: "bmad-prd" })');
    expect(system).toContain(
      `- planning_artifacts: ${path.join(project, '_bmad-output/planning-artifacts')}`,
    );
    expect(system).not.toMatch(/^- bmad-agent-pm:/m);
    expect(system).toMatch(/bmad-prd/);
    expect(first!.messages.at(-1)).toMatchObject({ role: 'user' });
    expect(String(first!.messages.at(-1)!.content)).toMatch(/^PRD\n\n\(Menu item PRD.*activate_skill/);
    // The agent's tools with the skills' activate_skill, beside the runtime's loop-control tools and update_plan.
    expect(first!.tools.map((t) => t.function.name).sort()).toEqual([
      'activate_skill',
      'ask_question',
      'converse',
      'execute_workflow',
      'read_file',
      'save_output',
      'task_completion',
      'update_plan',
    ]);
    const activation = String(afterActivate!.messages.at(-1)!.content);
    const prdSkill = await readFile(path.join(project, '.claude/skills/bmad-prd/SKILL.md'), 'utf8');
    expect(activation).toContain('"activated":"bmad-prd"');
    expect(JSON.parse(activation).instructions).toBe(prdSkill.slice(prdSkill.indexOf('# BMad PRD')));
    const template = await readFile(
      path.join(project, '.claude/skills/bmad-prd/assets/prd-template.md'),
      'utf8',
    );
    expect(JSON.parse(String(afterRead!.messages.at(-1)!.content)).content).toBe(template);

    // The first request's size, the skills catalog included (29 skills installed, 28 listed: not pm's own).
    const tokens = new TokenCounter().countPrompt(first!.messages, first!.tools);
    const catalog = skills.filter((s) => s !== 'bmad-agent-pm' && system.includes(s)).length;
    console.log(
      `first request with ${skills.length} skills installed (${catalog} in the catalog): ${tokens} tokens, ` +
        `system prompt ${system.length} characters`,
    );
    expect(skills.length).toBe(29);
    expect(catalog).toBe(28);
    expect(tokens).toBeGreaterThan(2000);
    expect(tokens).toBeLessThan(12_000);

    tmux.type('pm', '/exit');
    const closing = await tmux.waitFor('pm', /\[exit 0\]/);
    await mkdir(path.join(repoRoot, 'test-artifacts'), { recursive: true });
    await writeFile(path.join(repoRoot, 'test-artifacts', 'bmad6-chat-screen.txt'), `${closing.trimEnd()}\n`);
  }, 90_000);
});
