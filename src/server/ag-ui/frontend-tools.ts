import type { Tool as AgUiTool } from '@ag-ui/core';
import { z } from 'zod';
import { defineTool, type Tool } from '../../tools/define-tool.js';
import { HttpError } from '../http-error.js';

/**
 * The client's tools (`RunAgentInput.tools`: CopilotKit's `useFrontendTool`, `useHumanInTheLoop`) as
 * tools of the agent. The model calls them like any other; their arguments are checked against the
 * client's JSON Schema; the call waits (as a call waiting for approval does) until a later run
 * carries its result as a tool message; then it "runs" by returning that result. `results` is the
 * run's map of such results by call id.
 */
export function frontendTools(tools: readonly AgUiTool[], results: ReadonlyMap<string, string>): Tool[] {
  return tools.map((tool, index) => {
    const schema = objectSchema(tool.parameters);
    let check: z.ZodType;
    try {
      check = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new HttpError(
        400,
        'bad_input',
        `RunAgentInput.tools.${index}.parameters: not a usable JSON Schema (${why})`,
      );
    }
    const parameters = z.looseObject({}).superRefine((args, ctx) => {
      const verdict = check.safeParse(args);
      if (!verdict.success)
        ctx.addIssue({ code: 'custom', message: verdict.error.issues[0]?.message ?? 'invalid' });
    });
    try {
      return defineTool({
        name: tool.name,
        description: tool.description,
        parameters,
        jsonSchema: schema,
        // A call with bad arguments does not wait for the client: it runs at once and its result is the
        // validation error, as for a server tool.
        needsApproval: (args) => check.safeParse(args).success,
        execute: (_args, ctx) => {
          const result = results.get(ctx.toolCallId);
          if (result === undefined)
            throw new Error(`the client gave no result for its tool call ${ctx.toolCallId}`);
          return result;
        },
      });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new HttpError(400, 'bad_input', `RunAgentInput.tools.${index}: ${why}`);
    }
  });
}

function objectSchema(input: unknown): Record<string, unknown> {
  const schema =
    typeof input === 'object' && input !== null && !Array.isArray(input)
      ? (input as Record<string, unknown>)
      : {};
  const { $schema: _ignored, ...rest } = schema;
  return { ...rest, type: 'object', properties: rest.properties ?? {} };
}
