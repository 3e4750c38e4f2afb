import type { RunAgentInput } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { HttpError } from '../http-error.js';

const KNOWN_FIELDS: ReadonlySet<string> = new Set(Object.keys(RunAgentInputSchema.shape));

/**
 * Checks a request body against AG-UI's `RunAgentInput` schema (`@ag-ui/core`), refusing fields the
 * protocol does not define at its top level. A bad body is a 400 naming the first wrong field.
 */
export function parseRunInput(body: unknown): RunAgentInput {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new HttpError(400, 'bad_input', 'RunAgentInput: the body must be a JSON object');
  }
  const unknown = Object.keys(body).filter((key) => !KNOWN_FIELDS.has(key));
  if (unknown.length > 0) {
    throw new HttpError(400, 'bad_input', `RunAgentInput: unknown field ${JSON.stringify(unknown[0])}`);
  }
  const parsed = RunAgentInputSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : '(body)';
    throw new HttpError(400, 'bad_input', `RunAgentInput.${field}: ${issue.message}`);
  }
  const input = parsed.data as RunAgentInput;
  if (input.threadId.trim() === '')
    throw new HttpError(400, 'bad_input', 'RunAgentInput.threadId: must not be empty');
  if (input.runId.trim() === '')
    throw new HttpError(400, 'bad_input', 'RunAgentInput.runId: must not be empty');
  return input;
}

/**
 * Whether the client speaks AG-UI 1.0 or later (it sends `protocolVersion`); clients before 1.0 (the
 * 0.0.x line CopilotKit bundles) send none and get the event shapes their schemas accept.
 */
export function speaks10(input: Pick<RunAgentInput, 'protocolVersion'>): boolean {
  const major = Number.parseInt(input.protocolVersion ?? '0', 10);
  return Number.isFinite(major) && major >= 1;
}
