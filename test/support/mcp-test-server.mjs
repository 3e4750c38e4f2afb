// A small MCP server for the tests, written with the MCP SDK's server API and spoken to over stdio.
// It does what server-everything cannot be made to do on cue: crash mid-call, hang until cancelled,
// change its tool list, fail to start. MCP_TEST_LOG names a file it appends what it saw to.
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const log = (line) => {
  if (process.env.MCP_TEST_LOG) appendFileSync(process.env.MCP_TEST_LOG, `${process.pid} ${line}\n`);
};

if (process.env.MCP_TEST_FAIL_START) {
  process.stderr.write('loading config...\nfatal: the database at db://nowhere is unreachable\n');
  process.exit(1);
}

const server = new McpServer(
  { name: 'agentloop-test-server', version: '1.0.0' },
  { capabilities: { tools: { listChanged: true } } },
);
let count = 0;

server.registerTool(
  'count',
  {
    description: 'Counts calls; says which process answered.',
    inputSchema: { by: z.number().int().optional() },
    annotations: { readOnlyHint: true },
  },
  async ({ by }) => {
    count += by ?? 1;
    return { content: [{ type: 'text', text: `count ${count} from pid ${process.pid}` }] };
  },
);

server.registerTool(
  'write_note',
  {
    description: 'Writes a note (not read-only: asks for approval).',
    inputSchema: { text: z.string() },
    annotations: { readOnlyHint: false },
  },
  async ({ text }) => {
    log(`note ${text}`);
    return { content: [{ type: 'text', text: `noted: ${text}` }] };
  },
);

server.registerTool(
  'crash',
  { description: 'Exits the server in the middle of the call.', inputSchema: {} },
  async () => {
    process.stderr.write('about to crash on purpose\n');
    setTimeout(() => process.exit(3), 20);
    return new Promise(() => {});
  },
);

server.registerTool(
  'hang',
  { description: 'Never answers; logs the cancellation when it comes.', inputSchema: {} },
  async (_args, extra) => {
    log('hang started');
    await new Promise((resolve) => {
      extra.signal.addEventListener('abort', () => {
        log(`cancelled ${String(extra.requestId)}`);
        resolve();
      });
    });
    return { content: [{ type: 'text', text: 'cancelled' }] };
  },
);

server.registerTool('fail', { description: 'Reports a failure (isError).', inputSchema: {} }, async () => ({
  isError: true,
  content: [{ type: 'text', text: 'the widget is jammed' }],
}));

server.registerTool(
  'add_tool',
  { description: 'Adds the tool "late" (the server sends tools/list_changed).', inputSchema: {} },
  async () => {
    slowList = true;
    server.registerTool(
      'late',
      { description: 'A tool added after start.', inputSchema: {}, annotations: { readOnlyHint: true } },
      async () => ({ content: [{ type: 'text', text: 'late tool answered' }] }),
    );
    return { content: [{ type: 'text', text: 'added late' }] };
  },
);

// After a list change, tools/list is answered 400 ms late: a client that does not wait for the new
// list before its next model call offers the old one (the list_changed test checks that it waits).
// The wait sits in front of the server's handler, through the transport's public `onmessage`.
let slowList = false;
const transport = new StdioServerTransport();
await server.connect(transport);
const deliver = transport.onmessage;
transport.onmessage = (message, extra) => {
  if (!(slowList && message.method === 'tools/list')) return deliver(message, extra);
  log('tools/list held 400 ms');
  setTimeout(() => deliver(message, extra), 400);
};
log('started');
