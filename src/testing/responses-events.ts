import type { StreamPlan, WireReply } from './openai-wire.js';
import { splitText } from './split-text.js';

/**
 * A scripted reply in the Responses API's shapes: the `response` object (the non-streamed body, and
 * what the last stream event carries) and its SSE events. Output items come in the order OpenAI sends
 * them: a reasoning item (summary, and an opaque `encrypted_content` the client must send back with
 * `store: false`), the message with its `output_text`, then one `function_call` item per call.
 */

type Json = Record<string, unknown>;

/** The opaque `encrypted_content` of a scripted reasoning item (what a client must send back). */
export function scriptedEncryptedReasoning(reply: WireReply): string {
  return `enc_${Buffer.from(`${reply.id}:${reply.reasoning}`).toString('base64')}`;
}

/** The reasoning items of a reply: the scripted ones as given, else one made from `reasoning` (or none). */
function reasoningItems(reply: WireReply): Json[] {
  if (reply.reasoningItems?.length) return reply.reasoningItems as unknown as Json[];
  return reply.reasoning ? [reasoningItem(reply)] : [];
}

function reasoningItem(reply: WireReply): Json {
  return {
    id: `rs_${reply.id}`,
    type: 'reasoning',
    summary: [{ type: 'summary_text', text: reply.reasoning }],
    encrypted_content: scriptedEncryptedReasoning(reply),
  };
}

function messageItem(reply: WireReply, text: string, status: string): Json {
  return {
    id: `msg_${reply.id}`,
    type: 'message',
    status,
    role: 'assistant',
    content: status === 'in_progress' ? [] : [{ type: 'output_text', text, annotations: [] }],
  };
}

function callItem(reply: WireReply, index: number, args: string, status: string): Json {
  const call = reply.toolCalls[index]!;
  return {
    id: `fc_${reply.id}_${index}`,
    type: 'function_call',
    status,
    ...(call.id === null ? {} : { call_id: call.id }),
    name: call.name,
    arguments: args,
  };
}

/** The output items of the finished reply. */
function outputItems(reply: WireReply): Json[] {
  const items: Json[] = reasoningItems(reply);
  if (reply.content) items.push(messageItem(reply, reply.content, 'completed'));
  reply.toolCalls.forEach((call, i) => {
    items.push(callItem(reply, i, call.arguments, 'completed'));
  });
  return items;
}

/** The `response` object; `done: false` gives the in-progress one `response.created` carries. */
export function responseObject(reply: WireReply, done = true): Json {
  const cut = reply.finishReason === 'length' || reply.finishReason === 'content_filter';
  const usage = reply.usage;
  return {
    id: `resp_${reply.id}`,
    object: 'response',
    created_at: reply.created,
    model: reply.model,
    status: !done ? 'in_progress' : cut ? 'incomplete' : 'completed',
    incomplete_details:
      done && cut
        ? { reason: reply.finishReason === 'length' ? 'max_output_tokens' : 'content_filter' }
        : null,
    error: null,
    output: done ? outputItems(reply) : [],
    store: false,
    usage: done
      ? {
          input_tokens: usage.prompt_tokens,
          input_tokens_details: { cached_tokens: usage.prompt_tokens_details.cached_tokens },
          output_tokens: usage.completion_tokens,
          output_tokens_details: {
            reasoning_tokens: reply.reasoning ? Math.ceil(reply.reasoning.length / 4) : 0,
          },
          total_tokens: usage.total_tokens,
        }
      : null,
  };
}

/** The non-streamed Responses body. */
export function responseJson(reply: WireReply): string {
  return JSON.stringify(responseObject(reply));
}

/**
 * The SSE events of a streamed reply (`event: <type>` and `data: {...}`, numbered), with where the
 * `cut-*` faults break the stream: inside the text deltas, inside the first call's argument deltas.
 * No `data: [DONE]`: the Responses API ends with `response.completed` (or `response.incomplete`).
 */
export function responseStreamEvents(reply: WireReply, chunkSize: number | undefined): StreamPlan {
  const events: string[] = [];
  const send = (type: string, fields: Json) => {
    events.push(
      `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: events.length, ...fields })}\n\n`,
    );
  };
  send('response.created', { response: responseObject(reply, false) });
  send('response.in_progress', { response: responseObject(reply, false) });
  let output = 0;
  for (const item of reasoningItems(reply)) {
    send('response.output_item.added', { output_index: output, item: { ...item, summary: [] } });
    const summary = Array.isArray(item.summary) ? (item.summary as { text: string }[]) : [];
    summary.forEach(({ text }, index) => {
      const at = { item_id: item.id, output_index: output, summary_index: index };
      send('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
      for (const delta of splitText(text, chunkSize)) {
        send('response.reasoning_summary_text.delta', { ...at, delta });
      }
      send('response.reasoning_summary_text.done', { ...at, text });
    });
    send('response.output_item.done', { output_index: output++, item });
  }
  let cutMidText = events.length;
  if (reply.content) {
    const id = `msg_${reply.id}`;
    const at = { item_id: id, output_index: output, content_index: 0 };
    send('response.output_item.added', { output_index: output, item: messageItem(reply, '', 'in_progress') });
    send('response.content_part.added', { ...at, part: { type: 'output_text', text: '', annotations: [] } });
    const pieces = splitText(reply.content, chunkSize);
    cutMidText = events.length + Math.floor(pieces.length / 2);
    for (const delta of pieces) send('response.output_text.delta', { ...at, delta, logprobs: [] });
    send('response.output_text.done', { ...at, text: reply.content, logprobs: [] });
    send('response.content_part.done', {
      ...at,
      part: { type: 'output_text', text: reply.content, annotations: [] },
    });
    send('response.output_item.done', {
      output_index: output++,
      item: messageItem(reply, reply.content, 'completed'),
    });
  }
  let cutMidToolCall = events.length;
  reply.toolCalls.forEach((call, i) => {
    const item = callItem(reply, i, '', 'in_progress');
    const at = { item_id: item.id, output_index: output };
    send('response.output_item.added', { output_index: output, item });
    const fragments = splitText(call.arguments, chunkSize);
    if (i === 0) cutMidToolCall = events.length + Math.floor(fragments.length / 2);
    for (const delta of fragments) send('response.function_call_arguments.delta', { ...at, delta });
    send('response.function_call_arguments.done', { ...at, name: call.name, arguments: call.arguments });
    send('response.output_item.done', {
      output_index: output++,
      item: callItem(reply, i, call.arguments, 'completed'),
    });
  });
  const cut = reply.finishReason === 'length' || reply.finishReason === 'content_filter';
  send(cut ? 'response.incomplete' : 'response.completed', { response: responseObject(reply) });
  return { events, cutMidText, cutMidToolCall };
}
