import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-error.js';

/**
 * Reads a request's JSON body, refusing more than `limit` bytes (413, stopped as soon as it is
 * passed, whatever `Content-Length` claims) and anything that is not JSON (400 naming the position).
 */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.resume(); // drain what is left without keeping it
      throw tooLarge(limit);
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '')
    throw new HttpError(400, 'bad_input', 'the request body is empty: send a JSON object');
  try {
    return JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new HttpError(400, 'bad_input', `the request body is not valid JSON (${reason})`);
  }
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, 'body_too_large', `the request body is larger than the limit of ${limit} bytes`);
}
