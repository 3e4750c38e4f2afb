// The page's commands, checked before anything is done with them. protocol.ts holds only their
// types (the page imports it); this is the server's check of the same shapes, with zod.
import { z } from 'zod';
import type { ClientMessage } from './protocol.js';

/** Command types the server carries out; anything else is answered with an error. */
const COMMAND_TYPES: readonly string[] = ['sync', 'approve', 'reject', 'fork'];

const commandId = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** Session ids and tool call ids: made by agentloop, the embedder or the model; bounded all the same. */
const name = z.string().min(1).max(4096);

const commandSchema = z.discriminatedUnion('t', [
  z.object({ t: z.literal('sync'), id: commandId, session: name }),
  z.object({ t: z.literal('approve'), id: commandId, session: name, toolCallId: name }),
  z.object({
    t: z.literal('reject'),
    id: commandId,
    session: name,
    toolCallId: name,
    reason: z.string().max(4000).optional(),
  }),
  z.object({
    t: z.literal('fork'),
    id: commandId,
    session: name,
    seq: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  }),
]);

// The schema and the protocol's type must describe the same messages.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemaMatchesProtocol: Same<z.infer<typeof commandSchema>, ClientMessage> = true;
void schemaMatchesProtocol;

/** A frame read as a command: the command, or why not (with its `id` when it had a usable one, to ack). */
export type ReadCommand = { ok: true; message: ClientMessage } | { ok: false; id?: number; error: string };

/**
 * Reads one WebSocket frame from a page. Never throws: anything that is not exactly a known command
 * (not JSON, not an object, an unknown `t`, a field of the wrong type or size) is an error to answer.
 */
export function readCommand(frame: string): ReadCommand {
  let value: unknown;
  try {
    value = JSON.parse(frame);
  } catch {
    return { ok: false, error: 'not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, error: 'expected a command object' };
  }
  const fields = value as Record<string, unknown>;
  // Own properties only: `{"t":"toString"}` or a missing `id` must not find Object.prototype's.
  const own = (key: string): unknown => (Object.hasOwn(fields, key) ? fields[key] : undefined);
  const parsedId = commandId.safeParse(own('id'));
  const id = parsedId.success ? { id: parsedId.data } : {};
  const t = own('t');
  if (typeof t !== 'string' || !COMMAND_TYPES.includes(t)) {
    const shown = typeof t === 'string' ? ` ${JSON.stringify(t.slice(0, 40))}` : '';
    return { ok: false, ...id, error: `unknown command${shown}: expected ${COMMAND_TYPES.join(', ')}` };
  }
  const parsed = commandSchema.safeParse(value);
  if (parsed.success) return { ok: true, message: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` (${issue.path.map(String).join('.')})` : '';
  return { ok: false, ...id, error: `invalid ${t} command${where}: ${issue?.message ?? 'invalid'}` };
}
