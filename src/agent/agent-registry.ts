import type { AgentDefinition } from '../prompt/agent-definition.js';

/** Agent definitions by name. Make one per app and share it; lookups are O(1). */
export class AgentRegistry {
  // biome-ignore lint/suspicious/noExplicitAny: definitions of every input and output type live here.
  readonly #agents = new Map<string, AgentDefinition<any, any>>();

  /** Adds a definition; a second one with the same name is an error naming it. */
  // biome-ignore lint/suspicious/noExplicitAny: see above.
  register(definition: AgentDefinition<any, any>): this {
    if (this.#agents.has(definition.name))
      throw new Error(`agent "${definition.name}" is already registered`);
    this.#agents.set(definition.name, definition);
    return this;
  }

  /** The definition of `name`, or `undefined`. */
  // biome-ignore lint/suspicious/noExplicitAny: see above.
  get(name: string): AgentDefinition<any, any> | undefined {
    return this.#agents.get(name);
  }

  /** The definition of `name`; an unknown name is an error listing the registered ones. */
  // biome-ignore lint/suspicious/noExplicitAny: see above.
  require(name: string): AgentDefinition<any, any> {
    const definition = this.#agents.get(name);
    if (!definition) {
      throw new Error(
        `no agent named "${name}" (registered: ${[...this.#agents.keys()].join(', ') || 'none'})`,
      );
    }
    return definition;
  }

  has(name: string): boolean {
    return this.#agents.has(name);
  }

  // biome-ignore lint/suspicious/noExplicitAny: see above.
  getAll(): AgentDefinition<any, any>[] {
    return [...this.#agents.values()];
  }

  /** Removes `name`; `false` when it was not registered. */
  unregister(name: string): boolean {
    return this.#agents.delete(name);
  }
}
