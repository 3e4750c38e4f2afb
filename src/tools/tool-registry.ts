import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import type { Tool } from './define-tool.js';

/** The tools one agent can call, by name. */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();
  #json: ChatCompletionFunctionTool[] | undefined;

  constructor(tools: Iterable<Tool> = []) {
    for (const tool of tools) this.add(tool);
  }

  /** Adds a tool; a second tool with the same name is an error naming it. */
  add(tool: Tool): this {
    if (this.#tools.has(tool.name)) throw new Error(`duplicate tool name: ${tool.name}`);
    this.#tools.set(tool.name, tool);
    this.#json = undefined;
    return this;
  }

  /** Removes a tool (an MCP server's tool that went away); whether it was there. */
  remove(name: string): boolean {
    const removed = this.#tools.delete(name);
    if (removed) this.#json = undefined;
    return removed;
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  get names(): string[] {
    return [...this.#tools.keys()];
  }

  get size(): number {
    return this.#tools.size;
  }

  /** Every tool, in the order added. */
  get tools(): Tool[] {
    return [...this.#tools.values()];
  }

  /** The tool list as sent to the model; built once per change of the list and reused for every request. */
  toJSON(): ChatCompletionFunctionTool[] {
    this.#json ??= [...this.#tools.values()].map((t) => t.json);
    return this.#json;
  }
}
