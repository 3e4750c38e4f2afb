import { type ZodObject, type ZodRawShape, type ZodType, z } from 'zod';
import type { AgentLimits } from '../limits.js';
import type { Message } from '../llm/message.js';
import type { Tool } from '../tools/define-tool.js';

/**
 * An agent as a typed value: what it is told, which model and tools it uses, what it takes and what it
 * returns. `createAgent(toAgentOptions(definition, inputs, runtime))` runs it; a BMAD agent file
 * compiles into one (`loadBundleAgent(...).definition`). It lives here, below `agent/`, because the
 * folders that produce definitions (bundle, skills) may only import downward.
 */
export interface AgentDefinition<TInput extends ZodRawShape = ZodRawShape, TOutput = unknown> {
  /** Unique name: letters, digits, `_` and `-` (it can become a tool name). */
  name: string;
  description: string;
  /** The system prompt; `${name}` placeholders are filled from the inputs (`\${name}` stays as written). */
  instructions: string;
  /** More leading messages (critical-action context). */
  contextMessages?: Message[];
  model?: string;
  limits?: Partial<AgentLimits>;
  tools?: Tool[];
  /** The inputs the agent takes (validated before it starts; they fill `${...}` in the instructions). */
  inputSchema?: ZodObject<TInput>;
  /** The shape of its final answer (JSON), validated into `result.output`. */
  outputSchema?: ZodType<TOutput>;
}

/** What an agent name may be: 1 to 64 letters, digits, `_` and `-`. */
export const AGENT_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
/** A `${name}` placeholder, or with a backslash before it (group 1) a literal `${name}`. */
const PLACEHOLDER = /(\\?)\$\{([a-zA-Z_][a-zA-Z0-9_]*)\}/g;

/** Checks a definition once, when it is made: the name, duplicate tools, and every placeholder declared as an input. */
export function defineAgent<TInput extends ZodRawShape = ZodRawShape, TOutput = unknown>(
  definition: AgentDefinition<TInput, TOutput>,
): AgentDefinition<TInput, TOutput> {
  if (!AGENT_NAME_PATTERN.test(definition.name)) {
    throw new Error(
      `defineAgent: invalid agent name ${JSON.stringify(definition.name)} (letters, digits, _ and -)`,
    );
  }
  const seen = new Set<string>();
  for (const tool of definition.tools ?? []) {
    if (seen.has(tool.name))
      throw new Error(`defineAgent(${definition.name}): duplicate tool "${tool.name}"`);
    seen.add(tool.name);
  }
  const declared = new Set(Object.keys(definition.inputSchema?.shape ?? {}));
  for (const [, escaped, key] of definition.instructions.matchAll(PLACEHOLDER)) {
    if (!escaped && !declared.has(key!)) {
      throw new Error(
        `defineAgent(${definition.name}): instructions use \${${key}} but inputSchema has no "${key}"`,
      );
    }
  }
  return definition;
}

/** Validates the inputs and fills the instructions' `${...}` placeholders. Errors name the agent and the key. */
export function renderInstructions<TInput extends ZodRawShape>(
  definition: AgentDefinition<TInput, unknown>,
  inputs: Record<string, unknown> = {},
): string {
  let values: Record<string, unknown> = inputs;
  if (definition.inputSchema) {
    const parsed = definition.inputSchema.safeParse(inputs);
    if (!parsed.success) {
      const issues = parsed.error.issues
        .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
        .join('; ');
      throw new Error(`agent ${definition.name}: invalid inputs: ${issues}`);
    }
    values = parsed.data as Record<string, unknown>;
  }
  return definition.instructions.replace(PLACEHOLDER, (_, escaped: string, key: string) => {
    if (escaped) return `\${${key}}`;
    const value = values[key];
    if (value === undefined) throw new Error(`agent ${definition.name}: no value for \${${key}}`);
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}

/**
 * Text to put in instructions as written: every `${name}` gets a backslash before it, so neither
 * `defineAgent` nor `renderInstructions` takes it for a placeholder (a bundle's prompt is not a template).
 */
export function escapeInstructions(text: string): string {
  return text.replace(PLACEHOLDER, (match) => `\\${match}`);
}

/** A schema that accepts anything, for agents without an input schema. */
export const noInputs = z.object({});
