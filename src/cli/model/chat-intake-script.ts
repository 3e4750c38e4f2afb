import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { Scenario, ScriptedRequest, ScriptedTurn } from '../../testing/scenario.js';

/**
 * The built-in model for `agentloop chat` with the example bundle when no model is configured: a
 * scripted facilitator that runs the intake workflow by real tool calls (execute_workflow, then
 * save_output) and writes down what the user answered. It reads the whole conversation on every
 * request, so it follows interrupts, rejections and restored sessions like a model would.
 */
export const intakeChatScenario: Scenario = {
  turns: Array.from({ length: 400 }, () => (request: ScriptedRequest) => intakeReply(request)),
};

const STEPS = [
  'Step 1 of 5: Understand the problem. What problem are you trying to solve, and who feels it most today?',
  'Step 2 of 5: Identify the people involved. Who will use the result, and who else has a stake in it?',
  'Step 3 of 5: Define what success looks like. If this works, what will be different in three months?',
  'Step 4 of 5: Draw the scope line. What must the first version do, and what can wait?',
  'Step 5 of 5: Constraints and open questions. Are there deadlines, budgets, systems or rules we have to work within?',
];
const SECTIONS = [
  'Problem',
  'Users and stakeholders',
  'What success looks like',
  'Scope',
  'Constraints and open questions',
];
const MENU =
  'Pick a number or type a command:\n1. *help\n2. *intake-workflow - run a requirements intake and save the document\n' +
  '3. *stakeholder-map\n4. *review-intake\n5. *exit';
const PACE = { chunkSize: 6, chunkDelayMs: 12, delayMs: 250 } as const;

type Msg = ChatCompletionMessageParam;

function text(message: Msg | undefined): string {
  const content = message?.content;
  return typeof content === 'string' ? content : '';
}

/** The call a tool message answers. */
function callOf(messages: Msg[], toolCallId: string) {
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    const call = m.tool_calls?.find((c) => c.id === toolCallId);
    if (call && call.type === 'function') return call.function;
  }
  return undefined;
}

function say(content: string): ScriptedTurn {
  return { content, ...PACE };
}

function intakeReply(request: ScriptedRequest): ScriptedTurn {
  const messages = request.messages as Msg[];
  const last = messages.at(-1);
  // The index of the tool message with the loaded workflow: the intake runs from there.
  const loadedAt = messages.findLastIndex((m) => {
    if (m.role !== 'tool') return false;
    const call = callOf(messages, m.tool_call_id);
    return call?.name === 'execute_workflow' && text(m).includes('"workflow_name"');
  });
  const savedAt = messages.findLastIndex(
    (m, i) =>
      i > loadedAt &&
      m.role === 'tool' &&
      callOf(messages, m.tool_call_id)?.name === 'save_output' &&
      text(m).includes('"success":true'),
  );

  if (last?.role === 'tool') {
    const call = callOf(messages, last.tool_call_id);
    const result = text(last);
    if (/was interrupted|was not run|interrupted by the user/.test(result)) {
      return say(
        `The ${call?.name ?? 'tool'} call was cut off before it finished. Say "go on" and I will pick up from there.`,
      );
    }
    if (call?.name === 'execute_workflow') {
      if (loadedAt !== messages.length - 1) return say(`I could not load the workflow: ${result}`);
      return say(
        `Hi ${userName(messages)}! This intake has five short steps, one question at a time. ${STEPS[0]}`,
      );
    }
    if (call?.name === 'save_output') {
      if (/declined/.test(result)) {
        return say(
          'Understood, I did not save it. Tell me what to change, or say "save" and I will write it as it stands.',
        );
      }
      const saved = /"path":"([^"]+)"/.exec(result)?.[1];
      if (!saved) return say(`Saving failed: ${result}`);
      return say(
        `Saved the intake document to ${saved}. That completes the intake. A good next step is *stakeholder-map, with a real model.`,
      );
    }
    return say('Done.');
  }

  const input = text(last).trim();
  if (/^(\*?help|1)$/i.test(input)) return say(`Here is what I can do. ${MENU}`);
  if (/^(\*?exit|5)$/i.test(input)) return say('Goodbye! Your session is saved; come back any time.');
  if (/^(\*?intake-workflow|2)$/i.test(input) || (loadedAt < 0 && /intake/i.test(input))) {
    return {
      toolCalls: [
        {
          name: 'execute_workflow',
          arguments: { workflow_path: '{bundle-root}/workflows/intake-workflow/workflow.yaml' },
        },
      ],
      delayMs: PACE.delayMs,
    };
  }
  if (/^(\*?stakeholder-map|\*?review-intake|3|4)$/i.test(input)) {
    return say(
      'That workflow is not part of the built-in script. Set OPENAI_API_KEY to run it with a real model, or pick 2 for the intake.',
    );
  }
  if (loadedAt < 0) return say(`Hello ${userName(messages)}! ${MENU}`);
  if (savedAt >= 0) return say('The intake is saved. Type *stakeholder-map to go on, or /exit to leave.');

  const answers = messages
    .slice(loadedAt + 1)
    .filter((m) => m.role === 'user')
    .map((m) => text(m).trim())
    .filter((a) => !/^(go on|continue|save)$/i.test(a));
  if (answers.length < STEPS.length) {
    const restated = answers.length > 0 ? `Noted: "${clip(answers.at(-1)!)}". ` : '';
    return say(`${restated}${STEPS[answers.length]}`);
  }
  return {
    content: 'Thanks, that is everything. Saving the intake document now.',
    toolCalls: [
      {
        name: 'save_output',
        arguments: {
          file_path: `{output_folder}/intake-${slug(answers[0]!)}-${dateOf(messages)}.md`,
          content: documentOf(answers, messages),
        },
      },
    ],
    ...PACE,
  };
}

function userName(messages: Msg[]): string {
  for (const m of messages) {
    const match = m.role === 'system' ? /user'?s name is ([^\s.,]+)/i.exec(text(m)) : null;
    if (match) return match[1]!;
  }
  return 'there';
}

function dateOf(messages: Msg[]): string {
  for (const m of messages) {
    const match = m.role === 'tool' ? /"date":"([\d-]+)"/.exec(text(m)) : null;
    if (match) return match[1]!;
  }
  return new Date().toISOString().slice(0, 10);
}

function slug(answer: string): string {
  const words = answer
    .toLowerCase()
    .replace(/[^a-z0-9\s]/g, ' ')
    .split(/\s+/)
    .filter((w) => w.length > 2)
    .slice(0, 3);
  return words.join('-') || 'project';
}

function clip(answer: string): string {
  return answer.length > 60 ? `${answer.slice(0, 59)}…` : answer;
}

function documentOf(answers: string[], messages: Msg[]): string {
  const extra = answers.slice(SECTIONS.length);
  const sections = SECTIONS.map((title, i) => {
    const body =
      i === SECTIONS.length - 1 && extra.length > 0 ? [answers[i], ...extra].join('\n\n') : answers[i];
    return `## ${title}\n\n${body}\n`;
  });
  return [
    `# Requirements intake: ${clip(answers[0]!)}`,
    '',
    `- Date: ${dateOf(messages)}`,
    `- Facilitated with: ${userName(messages)}`,
    '',
    ...sections,
  ].join('\n');
}
