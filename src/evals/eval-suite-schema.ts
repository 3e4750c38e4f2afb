import { z } from 'zod';
import { TERMINATE_REASONS } from '../machines/agent-context-schema.js';

// The shape of an eval suite file (docs/evals.md, "Eval suites"). Paths are as written in the file;
// `eval-suite-file.ts` resolves them against the file's folder.

const name = z.string().min(1, 'expected a non-empty string');
const count = z.number().int().min(0);

/** Where the agent under test comes from: a bundle agent, a set of Agent Skills, or a module. */
const agentSchema = z.union(
  [
    z.strictObject({ bundle: name, agent: name, project: name.optional() }),
    z.strictObject({ skills: z.array(name).min(1), project: name.optional() }),
    z.strictObject({ module: name, export: name.optional() }),
  ],
  { error: 'expected { bundle, agent }, { skills: [dirs] } or { module, export? }' },
);

/** The model live cases talk with. */
const modelSchema = z.strictObject({
  /** A scenario file for the scripted server: live cases run offline. */
  scenario: name.optional(),
  /** The model id sent (default: OPENAI_MODEL, else the built-in default). */
  name: name.optional(),
  baseUrl: name.optional(),
  /** The environment variable holding the key (default OPENAI_API_KEY); never the key itself. */
  apiKeyEnv: name.optional(),
  api: z.enum(['chat-completions', 'responses']).optional(),
});

const decision = z.enum(['approve', 'reject']);
/** `approve` / `reject` every call that asks, or by tool name (`'*'`: any other). */
const approvalsSchema = z.union([decision, z.record(z.string(), decision)], {
  error: 'expected approve, reject, or a map of tool name to approve | reject',
});

const stepSchema = z.union(
  [name.transform((n) => ({ name: n })), z.strictObject({ name, args: z.unknown() })],
  {
    error: 'expected a tool name or { name, args? }',
  },
);
/** `[steps]`, or `{ steps, match?, args? }`. */
const trajectorySchema = z.preprocess(
  (value) => (Array.isArray(value) ? { steps: value } : value),
  z.strictObject({
    steps: z.array(stepSchema),
    match: z.enum(['strict', 'unordered', 'subset', 'superset']).optional(),
    args: z.enum(['exact', 'subset', 'ignore']).optional(),
  }),
);

const oneOrMany = z.union([z.string(), z.array(z.string())]).transform((v) => (Array.isArray(v) ? v : [v]));
const outputSchema = z.strictObject({
  contains: oneOrMany.optional(),
  regex: z
    .string()
    .refine(
      (source) => {
        try {
          new RegExp(source);
          return true;
        } catch {
          return false;
        }
      },
      { error: 'not a valid regular expression' },
    )
    .optional(),
  equals: z.string().optional(),
  /** A JSON Schema the answer (parsed as JSON) must satisfy. */
  schema: z
    .record(z.string(), z.unknown())
    .superRefine((schema, ctx) => {
      try {
        z.fromJSONSchema(schema);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: `not a usable JSON Schema (${(error as Error).message})` });
      }
    })
    .optional(),
});

const expectSchema = z.strictObject({
  trajectory: trajectorySchema.optional(),
  /** Tools that must not be called (asked for by the model). */
  notCalled: z.array(name).optional(),
  /** Tools whose calls must have asked for approval. */
  approvalsAsked: z.array(name).optional(),
  output: outputSchema.optional(),
  terminateReason: z.enum(TERMINATE_REASONS).optional(),
  /** At most this many model calls and tokens over the case. */
  budget: z.strictObject({ modelCalls: count.optional(), tokens: count.optional() }).optional(),
});

const caseSchema = z
  .strictObject({
    name,
    /** The user message, or several (one turn each). */
    input: z.union([z.string(), z.array(z.string()).min(1)]).optional(),
    /** A recorded transcript (JSONL) to replay. */
    transcript: name.optional(),
    mode: z.enum(['replay', 'live']).optional(),
    /** A scenario for this case's scripted model (over the suite's `model.scenario`). */
    scenario: name.optional(),
    approvals: approvalsSchema.optional(),
    /** How a replay matches requests (default strict) and answers tool calls (default recorded). */
    replay: z
      .strictObject({
        match: z.enum(['strict', 'sequential']).optional(),
        tools: z.enum(['recorded', 'live']).optional(),
      })
      .optional(),
    expect: expectSchema.default({}),
    /** Live runs of the case (default 1) and the share of them that must pass (default 1). */
    trials: z.number().int().min(1).optional(),
    passRate: z.number().min(0).max(1).optional(),
  })
  .superRefine((c, ctx) => {
    const mode = c.mode ?? (c.transcript ? 'replay' : 'live');
    if (mode === 'replay' && !c.transcript) {
      ctx.addIssue({
        code: 'custom',
        path: ['transcript'],
        message: 'a replay case needs a transcript file',
      });
    }
    if (mode === 'live' && c.input === undefined) {
      ctx.addIssue({ code: 'custom', path: ['input'], message: 'a live case needs an input message' });
    }
  });

export const evalSuiteSchema = z.strictObject({
  /** Shown in reports (default: the file name). */
  name: name.optional(),
  agent: agentSchema,
  model: modelSchema.optional(),
  cases: z.array(caseSchema).min(1, 'expected at least one case'),
});

/** An eval suite file as written (paths relative to it). */
export type EvalSuiteSpec = z.output<typeof evalSuiteSchema>;
export type EvalAgentSpec = EvalSuiteSpec['agent'];
export type EvalModelSpec = NonNullable<EvalSuiteSpec['model']>;
export type EvalCaseSpec = EvalSuiteSpec['cases'][number];
export type EvalExpectations = EvalCaseSpec['expect'];
export type EvalApprovals = NonNullable<EvalCaseSpec['approvals']>;
