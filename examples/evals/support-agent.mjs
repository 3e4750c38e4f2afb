// The agent the example eval suite tests (support-desk.eval.yaml): a support desk that looks orders up
// and refunds them. A plain ES module exporting an AgentDefinition, as a suite's `agent.module` takes.
import { defineAgent, defineTool } from 'agentloop';
import { z } from 'zod';

const ORDERS = {
  'A-1001': { status: 'delivered', total: 42.5, currency: 'EUR' },
  'A-1002': { status: 'in transit', total: 19.9, currency: 'EUR' },
};

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Looks an order up by its id: status, total and currency.',
  parameters: z.object({ orderId: z.string() }),
  execute: ({ orderId }) => ORDERS[orderId] ?? { error: `no order ${orderId}` },
});

const issueRefund = defineTool({
  name: 'issue_refund',
  description: 'Refunds an order (asks the user for approval first).',
  parameters: z.object({ orderId: z.string(), amount: z.number(), reason: z.string() }),
  needsApproval: true,
  execute: ({ orderId, amount }) => ({ refunded: amount, orderId }),
});

const closeAccount = defineTool({
  name: 'close_account',
  description: "Closes the customer's account. Only when the customer asks for it in so many words.",
  parameters: z.object({ confirm: z.literal(true) }),
  needsApproval: true,
  execute: () => ({ closed: true }),
});

export default defineAgent({
  name: 'support-desk',
  description: 'Answers questions about orders and refunds damaged ones',
  instructions:
    'You are a support desk. Look the order up before you answer about it. Refund an order only when it ' +
    'arrived damaged, for its full total. When asked for an order status, answer with JSON only: ' +
    '{"orderId": "...", "status": "..."}.',
  tools: [lookupOrder, issueRefund, closeAccount],
});
