import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { defineTool } from '../../src/index.js';
import type { AskOutput } from '../../src/server/mcp/index.js';
import type { ScriptedTurn } from '../../src/testing/index.js';

/** A chat request's message as the scripted server sees it. */
interface SeenMessage {
  role: string;
  content?: unknown;
}

/**
 * The scripted model the MCP server tests talk to, routed by the conversation's last message: after
 * a tool result it answers `done: <result>`; a user message with `hang` never answers (for cancels),
 * `note` calls `noteTool` (a tool that needs approval), `look` calls `lookup`, anything else is
 * echoed (`echo: <text>`).
 */
export function routedModel(noteTool: string, noteArgs: Record<string, unknown>) {
  return (request: { messages: SeenMessage[] }): ScriptedTurn => {
    const last = request.messages.at(-1);
    const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
    if (last?.role === 'tool') return { content: `done: ${text}` };
    if (text.includes('hang')) return { fault: 'hang' };
    if (text.includes('note')) return { toolCalls: [{ name: noteTool, arguments: noteArgs }] };
    if (text.includes('look')) return { toolCalls: [{ name: 'lookup', arguments: { word: 'mcp' } }] };
    return { content: `echo: ${text}` };
  };
}

/** The `write_note` tool `routedModel` calls for a note: it needs approval, and hands each note it writes to `wrote`. */
export function noteWriter(wrote: (text: string) => void) {
  return defineTool({
    name: 'write_note',
    description: 'writes a note',
    parameters: z.object({ text: z.string() }),
    needsApproval: true,
    execute: ({ text }) => {
      wrote(text);
      return `wrote ${text}`;
    },
  });
}

/** Calls the agent's tool `tool` (`ask_<agent>`) with the MCP SDK's client. */
export async function askWith(
  client: Client,
  tool: string,
  args: Record<string, unknown>,
  options: { onprogress?: (p: Progress) => void; signal?: AbortSignal } = {},
): Promise<CallToolResult> {
  return (await client.callTool({ name: tool, arguments: args }, undefined, options)) as CallToolResult;
}

/** A tool result's text parts, one a line. */
export const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');

/** An `ask_<agent>` result's structured content. */
export const outputOf = (result: CallToolResult) => result.structuredContent as AskOutput;

/** The MCP SDK's client connected to `server` over the SDK's in-memory transport (close it when done). */
export async function connectInMemory(server: McpServer, name = 'in-memory'): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}
