import { z } from 'zod';
import { defineTool } from '../../src/index.js';

// Tools that note each run in an array the test reads: what ran, and with which arguments.

/**
 * The tool `charge` (`{ amount }`), which needs approval: each run is noted in `runs` ("charge 5") and
 * answers "charged 5". For tests of approvals across the servers' protocols.
 */
export function chargeTool(runs: string[] = []) {
  return defineTool({
    name: 'charge',
    description: 'charges a card',
    parameters: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: ({ amount }) => {
      runs.push(`charge ${amount}`);
      return `charged ${amount}`;
    },
  });
}

/** The tool `echo` (`{ text }`): each run is noted in `executions` (its text), and returns its text. */
export function echoTool(executions: string[]) {
  return defineTool({
    name: 'echo',
    description: 'returns its text',
    parameters: z.object({ text: z.string() }),
    execute: ({ text }) => {
      executions.push(text);
      return text;
    },
  });
}
