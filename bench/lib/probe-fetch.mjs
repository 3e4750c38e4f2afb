// A `fetch` for `new OpenAI({ fetch })` that timestamps the stream's bytes as they reach JavaScript,
// before the SDK parses them. For figure 3: it records, per tool-call index, the time the chunk that
// made the call's arguments certainly complete was received, and the time the stream's last event
// ([DONE]) was received. A call's arguments are certainly complete when the next call (a higher
// index) begins, or, for the calls still open, when the chunk with `finish_reason: "tool_calls"`
// arrives: arguments that happen to parse as JSON may still be cut (`finish_reason: "length"`), so
// agentloop starts no tool before that chunk.

/** Returns `{ fetch, marks }`; `marks.reset()` clears them before each request. */
export function createProbeFetch() {
  const marks = {
    argsComplete: new Map(),
    streamEnd: Number.NaN,
    reset() {
      this.argsComplete = new Map();
      this.streamEnd = Number.NaN;
    },
  };
  const probeFetch = async (url, init) => {
    const response = await fetch(url, init);
    const type = response.headers.get('content-type') ?? '';
    if (!response.body || !type.includes('text/event-stream')) return response;
    const decoder = new TextDecoder();
    /** Indexes of the calls begun, and of those not yet certainly complete. */
    const begun = new Set();
    let open = [];
    const complete = (indexes, now) => {
      for (const index of indexes) if (!marks.argsComplete.has(index)) marks.argsComplete.set(index, now);
    };
    let buffer = '';
    const probe = new TransformStream({
      transform(chunk, controller) {
        const now = performance.now();
        buffer += decoder.decode(chunk, { stream: true });
        let cut = buffer.indexOf('\n\n');
        while (cut >= 0) {
          const line = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          cut = buffer.indexOf('\n\n');
          if (!line.startsWith('data: ')) continue;
          const data = line.slice(6);
          if (data === '[DONE]') {
            // The first stream after reset() is the one with the calls; later ones (the final answer) do not count.
            if (Number.isNaN(marks.streamEnd)) marks.streamEnd = now;
            continue;
          }
          const choice = JSON.parse(data).choices?.[0];
          for (const part of choice?.delta?.tool_calls ?? []) {
            if (begun.has(part.index)) continue;
            begun.add(part.index);
            // A new call begins: the open calls before it are complete.
            complete(
              open.filter((index) => index < part.index),
              now,
            );
            open = open.filter((index) => index >= part.index);
            open.push(part.index);
          }
          if (choice?.finish_reason === 'tool_calls') {
            complete(open, now);
            open = [];
          }
        }
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(probe), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  return { fetch: probeFetch, marks };
}
