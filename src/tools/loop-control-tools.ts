import { z } from 'zod';
import { defineTool, type Tool } from './define-tool.js';

/** Ends the turn: the task is done; `result` is shown to the user as the answer. */
export const taskCompletionTool = defineTool({
  name: 'task_completion',
  description:
    'Call when the task is finished. `result` is the final answer shown to the user; the turn ends at once.',
  parameters: z.object({ result: z.string().describe('The final answer or summary for the user.') }),
  loopBreaking: 'completed',
  execute: ({ result }) => result,
});

/** Ends the turn with a question the user must answer before work can go on. */
export const askQuestionTool = defineTool({
  name: 'ask_question',
  description:
    'Call when you need information only the user has. The turn ends and the user answers in their next message.',
  parameters: z.object({ question: z.string().describe('One direct question for the user.') }),
  loopBreaking: 'question',
  execute: ({ question }) => question,
});

/** Ends the turn with a conversational reply that needs no tools. */
export const converseTool = defineTool({
  name: 'converse',
  description: 'Call to reply conversationally when no task work is needed. The turn ends with your message.',
  parameters: z.object({ message: z.string().describe('Your reply to the user.') }),
  loopBreaking: 'completed',
  execute: ({ message }) => message,
});

/** The three loop-breaking tools (`task_completion`, `ask_question`, `converse`). */
export const loopControlTools: Tool[] = [taskCompletionTool, askQuestionTool, converseTool];
