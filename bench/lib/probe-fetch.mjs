// A `fetch` for `new OpenAI({ fetch })` that timestamps the stream's bytes as they reach JavaScript,
// before the SDK parses them. For figure 3: it records, per tool-call index, the time the chunk that
// completed the call's arguments (made them parse as a JSON object) was received, and the time the
// stream's last event ([DONE]) was received.

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
    const args = new Map();
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
          const parts = JSON.parse(data).choices?.[0]?.delta?.tool_calls ?? [];
          for (const part of parts) {
            const text = (args.get(part.index) ?? '') + (part.function?.arguments ?? '');
            args.set(part.index, text);
            if (!marks.argsComplete.has(part.index) && isObject(text))
              marks.argsComplete.set(part.index, now);
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

function isObject(text) {
  if (!text.endsWith('}')) return false;
  try {
    const value = JSON.parse(text);
    return typeof value === 'object' && value !== null;
  } catch {
    return false;
  }
}
