import { AgentCard } from '@a2a-js/sdk';
import type { AgentSource } from '../agent-source.js';
import type { AuthOption } from '../request-auth.js';

/** A skill as the card lists it. */
export interface CardSkill {
  id: string;
  name: string;
  description: string;
  tags?: string[];
  examples?: string[];
}

/** What the card says beyond what the agent source tells. */
export interface CardInfo {
  /** The agent's name (default: the definition's, the bundle persona's, or `agent`). */
  name?: string;
  description?: string;
  /** The agent's version (default `1.0.0`). */
  version?: string;
  /** The skills (default: a bundle agent's menu items, else one skill: the agent itself). */
  skills?: CardSkill[];
}

/** The JSON-RPC endpoint's path under the server's URL. */
export const A2A_RPC_PATH = '/a2a';

/**
 * The A2A 1.0 agent card of a served agent: name, description, version, skills (a bundle agent's
 * menu items, the given list, or the agent itself), the JSON-RPC interface in both protocol versions
 * (1.0 and 0.3), streaming, push notifications when configured, and the security scheme the server's
 * auth asks for (a bearer token; a function of the request is declared as bearer too).
 */
export function agentCardFor(
  source: AgentSource,
  options: { url: string; auth?: AuthOption | undefined; push: boolean; info?: CardInfo | undefined },
): AgentCard {
  const known = describeSource(source);
  const name = options.info?.name ?? known.name ?? 'agent';
  const description = options.info?.description ?? known.description ?? `the agentloop agent ${name}`;
  const skills = options.info?.skills ?? known.skills ?? [{ id: name, name, description }];
  const endpoint = `${options.url.replace(/\/$/, '')}${A2A_RPC_PATH}`;
  const secured = options.auth !== undefined;
  return AgentCard.fromJSON({
    name,
    description,
    version: options.info?.version ?? '1.0.0',
    supportedInterfaces: [
      { url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    capabilities: { streaming: true, pushNotifications: options.push, extendedAgentCard: secured },
    ...(secured
      ? {
          securitySchemes: {
            bearer: {
              httpAuthSecurityScheme: { scheme: 'Bearer', description: 'Authorization: Bearer <token>' },
            },
          },
          securityRequirements: [{ schemes: { bearer: { list: [] } } }],
        }
      : {}),
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: skills.map((skill) => ({
      id: skill.id,
      name: skill.name,
      description: skill.description,
      tags: skill.tags ?? [],
      examples: skill.examples ?? [],
    })),
  });
}

/**
 * The same card in the A2A 0.3 shape (served to clients that send no `A2A-Version`, or `0.3`): one
 * `url` with `preferredTransport`, `protocolVersion`, `security` as a list of requirements.
 */
export function legacyCardJson(card: AgentCard): Record<string, unknown> {
  const v1 = AgentCard.toJSON(card) as Record<string, unknown>;
  const url = card.supportedInterfaces[0]?.url ?? '';
  const secured = Object.keys(card.securitySchemes).length > 0;
  return {
    protocolVersion: '0.3.0',
    name: card.name,
    description: card.description,
    url,
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url, transport: 'JSONRPC' }],
    version: card.version,
    capabilities: {
      streaming: card.capabilities?.streaming ?? false,
      pushNotifications: card.capabilities?.pushNotifications ?? false,
    },
    ...(secured
      ? {
          securitySchemes: {
            bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <token>' },
          },
          security: [{ bearer: [] }],
          supportsAuthenticatedExtendedCard: true,
        }
      : {}),
    defaultInputModes: v1.defaultInputModes ?? [],
    defaultOutputModes: v1.defaultOutputModes ?? [],
    skills: card.skills.map((skill) => ({
      id: skill.id,
      name: skill.name,
      description: skill.description,
      tags: skill.tags,
      ...(skill.examples.length > 0 ? { examples: skill.examples } : {}),
    })),
  };
}

function describeSource(source: AgentSource): { name?: string; description?: string; skills?: CardSkill[] } {
  if (typeof source === 'function') return {};
  if ('bundleRoot' in source && 'definition' in source) {
    return {
      name: source.definition.name,
      description: source.definition.description,
      skills: source.menu.map((item) => ({
        id: item.cmd.replace(/^\*/, ''),
        name: item.cmd,
        description: item.label,
        tags: [item.kind],
      })),
    };
  }
  return { name: source.name, description: source.description };
}
