import type { ChatCompletionChunk } from 'openai/resources/chat/completions';

/** A tool call as assembled from stream deltas. */
export interface AssembledToolCall {
  index: number;
  id: string;
  name: string;
  argsText: string;
}

/**
 * Assembles a streamed chat completion: text deltas are concatenated, tool calls are built by their
 * `index` (the first delta of a call carries id and name, later ones only argument fragments).
 * `push` reports what a chunk added so the caller can forward text and start complete calls early.
 */
export class CompletionAssembler {
  content = '';
  reasoning = '';
  finishReason: string | null = null;
  usage: ChatCompletionChunk['usage'] = null;
  readonly toolCalls: AssembledToolCall[] = [];
  readonly #complete = new Set<number>();

  /** Adds one chunk. Returns the text delta it carried and the tool calls it completed. */
  push(chunk: ChatCompletionChunk): { text: string; completed: AssembledToolCall[] } {
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) return { text: '', completed: [] };
    const delta = choice.delta ?? {};
    const text = delta.content ?? '';
    if (text) this.content += text;
    const reasoning = (delta as { reasoning_content?: string | null }).reasoning_content;
    if (reasoning) this.reasoning += reasoning;
    let completed: AssembledToolCall[] = [];
    for (const part of delta.tool_calls ?? []) {
      let call = this.toolCalls.find((c) => c.index === part.index);
      if (!call) {
        // A new index means every earlier call's arguments are complete.
        completed = completed.concat(this.#completeBelow(part.index));
        call = { index: part.index, id: part.id ?? '', name: part.function?.name ?? '', argsText: '' };
        this.toolCalls.push(call);
      } else {
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
      }
      const fragment = part.function?.arguments ?? '';
      if (fragment) {
        call.argsText += fragment;
        if (fragment.trimEnd().endsWith('}') && isCompleteJsonObject(call.argsText)) {
          completed = completed.concat(this.#markComplete(call));
        }
      }
    }
    if (choice.finish_reason) {
      this.finishReason = choice.finish_reason;
      // Calls completed by finish_reason are not reported: the stream is over and the batch runs anyway.
    }
    return { text, completed };
  }

  #completeBelow(index: number): AssembledToolCall[] {
    return this.toolCalls.filter((c) => c.index < index).flatMap((c) => this.#markComplete(c));
  }

  #markComplete(call: AssembledToolCall): AssembledToolCall[] {
    if (this.#complete.has(call.index) || !call.id || !call.name) return [];
    this.#complete.add(call.index);
    return [call];
  }
}

/** A JSON object is complete once it parses: no valid JSON continues after its closing brace. */
function isCompleteJsonObject(text: string): boolean {
  try {
    const value = JSON.parse(text);
    return typeof value === 'object' && value !== null;
  } catch {
    return false;
  }
}
