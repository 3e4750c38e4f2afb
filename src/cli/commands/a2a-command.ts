import type { AgentCard } from '@a2a-js/sdk';
import { parseFlags, UsageError } from '../cli-args.js';
import type { CommandIo } from '../command-io.js';

const USAGE = `Usage: agentloop a2a card <url> [--token <bearer>]
       agentloop a2a send <url> "<message>" [--context <id>] [--token <bearer>]
       agentloop a2a send <url> --task <id> --approve | --reject "<reason>"
  Talks to a remote agent over A2A (docs/a2a.md). card prints its agent card (JSON, A2A 1.0).
  send streams the answer to stdout; the task's id, context and final state go to stderr. A task that
  waits for approval lists the calls; answer it with --task <id> --approve or --reject "<reason>".
  --context <id>   continue a conversation (the context id a previous send printed)
  --token <bearer> Authorization: Bearer <token> (or AGENTLOOP_A2A_TOKEN)
  --version <v>    the protocol version to speak: 1.0 (default) or 0.3
Exit codes: 0 completed or waiting for input, 1 failed, canceled or unreachable, 2 bad flags.
`;

/** `agentloop a2a card|send`: a remote A2A agent from the terminal. */
export async function runA2aCommand(args: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags({
    args,
    allowPositionals: true,
    options: {
      token: { type: 'string' },
      context: { type: 'string' },
      task: { type: 'string' },
      approve: { type: 'boolean', default: false },
      reject: { type: 'string' },
      version: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [action, url, message] = positionals;
  if (values.help || !action) {
    io.stdout(USAGE);
    return values.help ? 0 : 2;
  }
  if (action !== 'card' && action !== 'send')
    throw new UsageError(`unknown action "${action}" (card or send)`);
  if (!url) throw new UsageError(`a2a ${action} needs the agent's <url>`);
  try {
    new URL(url);
  } catch {
    throw new UsageError(`"${url}" is not a URL`);
  }
  const version = values.version ?? '1.0';
  if (version !== '1.0' && version !== '0.3') throw new UsageError('--version must be 1.0 or 0.3');
  // The SDK is an optional peer: loaded once the flags are good, so that --help works without it.
  const {
    AgentCard: AgentCardJson,
    SendMessageRequest,
    TaskState,
  } = await import('@a2a-js/sdk').catch(a2aSdkMissing);
  const { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } = await import(
    '@a2a-js/sdk/client'
  ).catch(a2aSdkMissing);
  const token = values.token ?? process.env.AGENTLOOP_A2A_TOKEN;
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    if (token) headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
  const card = (await new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } })
    .resolve(url)
    .catch((error: unknown) => {
      throw new Error(
        `could not read the agent card of ${url}: ${error instanceof Error ? error.message : error}`,
      );
    })) as AgentCard;
  if (action === 'card') {
    io.stdout(`${JSON.stringify(AgentCardJson.toJSON(card), null, 2)}\n`);
    return 0;
  }
  const answering = values.approve || values.reject !== undefined;
  if (answering && !values.task) throw new UsageError('--approve and --reject need --task <id>');
  if (!answering && !message)
    throw new UsageError('a2a send needs a "<message>" (or --task with --approve/--reject)');
  const wanted = card.supportedInterfaces.filter((i) => i.protocolVersion === version);
  const client = await new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
  }).createFromAgentCard({
    ...card,
    supportedInterfaces: wanted.length > 0 ? wanted : card.supportedInterfaces,
  });
  const parts = answering
    ? [{ data: { approved: values.approve, ...(values.reject ? { reason: values.reject } : {}) } }]
    : [{ text: message }];
  const request = SendMessageRequest.fromJSON({
    message: {
      messageId: `msg-${crypto.randomUUID()}`,
      role: 'ROLE_USER',
      parts,
      ...(values.context ? { contextId: values.context } : {}),
      ...(values.task ? { taskId: values.task } : {}),
    },
  });
  let taskId = '';
  let contextId = '';
  let state = TaskState.TASK_STATE_UNSPECIFIED;
  let said = '';
  let streamed = false;
  let approvals: string[] = [];
  for await (const event of client.sendMessageStream(request)) {
    const payload = event.payload;
    if (payload?.$case === 'task') {
      taskId = payload.value.id;
      contextId = payload.value.contextId;
    } else if (payload?.$case === 'artifactUpdate' && payload.value.append) {
      streamed = true;
      io.stdout(textOf(payload.value.artifact?.parts ?? []));
    } else if (payload?.$case === 'statusUpdate') {
      state = payload.value.status?.state ?? state;
      const parts = payload.value.status?.message?.parts ?? [];
      said = textOf(parts);
      approvals = parts.flatMap((p) => {
        const v = p.content?.$case === 'data' ? (p.content.value as Record<string, unknown>) : undefined;
        return v?.type === 'approval_request'
          ? [`${v.toolName} ${JSON.stringify(v.args)} (call ${v.toolCallId})`]
          : [];
      });
    }
  }
  if (state === TaskState.TASK_STATE_COMPLETED) io.stdout(streamed ? '\n' : `${said}\n`);
  const name = (TaskState[state] ?? 'unknown').replace('TASK_STATE_', '').toLowerCase().replace('_', '-');
  io.stderr(`task ${taskId} (context ${contextId}): ${name}\n`);
  if (state === TaskState.TASK_STATE_INPUT_REQUIRED) {
    if (approvals.length > 0) {
      io.stderr(`waits for approval: ${approvals.join('; ')}\n`);
      io.stderr(`answer: agentloop a2a send ${url} --task ${taskId} --approve (or --reject "<reason>")\n`);
    } else io.stderr(`asks: ${said}\n`);
    return 0;
  }
  if (state !== TaskState.TASK_STATE_COMPLETED && said) io.stderr(`${said}\n`);
  return state === TaskState.TASK_STATE_COMPLETED ? 0 : 1;
}

function textOf(parts: { content?: { $case: string; value: unknown } | undefined }[]): string {
  return parts.flatMap((p) => (p.content?.$case === 'text' ? [String(p.content.value)] : [])).join('');
}

/** A missing optional peer, said as what to install. */
export function a2aSdkMissing(error: unknown): never {
  if ((error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND')
    throw new Error('A2A needs the optional package @a2a-js/sdk: npm install @a2a-js/sdk');
  throw error;
}
