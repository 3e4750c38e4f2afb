import { z } from 'zod';
import { defineTool } from '../../src/index.js';

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
