const THINKING = /<thinking>([\s\S]*?)<\/thinking>/g;

/**
 * The model's reasoning: the `reasoning_content` it streamed when there is any, else the `<thinking>`
 * blocks of its text (trimmed, one per line); '' when it gave none.
 */
export function reasoningOf(reasoningContent: string, content: string): string {
  if (reasoningContent || !content.includes('<thinking>')) return reasoningContent;
  return [...content.matchAll(THINKING)].map((m) => m[1]!.trim()).join('\n');
}
