import type { AgentOptions, ExecutionResult } from '../agent/agent-options.js';
import type { AgentDefinition } from '../prompt/agent-definition.js';
import type { Trajectory } from './trajectory.js';

/**
 * The agent a replay runs: `createAgent` options without a way to reach a model (the replay points
 * the agent at its own server) and without a session (a replay writes nothing), or an
 * `AgentDefinition` (then `inputs` fill its instructions). Without `model`, the recorded model is used.
 */
export type ReplayAgent =
  | Omit<AgentOptions, 'baseURL' | 'apiKey' | 'client' | 'store' | 'session' | 'sessionId'>
  | AgentDefinition;

/** How requests are matched to the recording. */
export type ReplayMatch = 'strict' | 'sequential';

/** Whether tools run during a replay. */
export type ReplayTools = 'recorded' | 'live';

/** A call waiting for approval during a replay, as the approval function gets it. */
export interface ReplayApprovalCall {
  toolCallId: string;
  name: string;
  args: unknown;
}

/** An approval answer: `true`/`false`, or with the reason a rejection gives the model. */
export type ReplayApprovalAnswer = boolean | { approved: boolean; reason?: string };

/** Options of {@link replaySession}. */
export interface ReplayOptions {
  /** The agent to run again (usually the changed one being tested). */
  agent: ReplayAgent;
  /** Inputs for an `AgentDefinition`'s instructions (`${name}` placeholders). */
  inputs?: Record<string, unknown>;
  /**
   * `strict` (default): each request must hash to the recorded one (`requestHash`); a miss is answered
   * with an error the agent does not retry and ends the replay with a divergence naming the first
   * differing JSON path. `sequential`: the k-th recorded reply answers the k-th call whatever it asks;
   * differences become warnings. A recording without `model_call` entries is always matched sequentially.
   */
  match?: ReplayMatch;
  /**
   * `recorded` (default, hermetic): each call gets its recorded result and no tool runs. `live`: the
   * tools run; the first result that differs from the recording is the divergence.
   */
  tools?: ReplayTools;
  /**
   * How approval requests are answered: `recorded` (default: as the recording answered them; a call
   * the recording ran without asking is approved) or a function of the call.
   */
  approve?: 'recorded' | ((call: ReplayApprovalCall) => ReplayApprovalAnswer | Promise<ReplayApprovalAnswer>);
  /** Called after each replayed turn (the CLI prints them as they come). */
  onTurn?: (turn: ReplayedTurn) => void;
  /**
   * Go on live where the recording ends (docs/evals.md, "Replay, then live"): the recorded calls are
   * answered from the cassette (checked as `match` says), and the first model call past them, and every
   * one after, goes to this live model, with the tools running for real. A divergence inside the
   * recorded part stops the replay before anything goes live. Without it, a call past the recording is
   * a divergence.
   */
  afterRecording?: ReplayLiveModel;
}

/**
 * The live model a replay goes on with after the recording: an OpenAI-compatible server (`baseURL`,
 * default OpenAI's) and its key; at least one of the two. `model` replaces the model named in the live
 * requests (default: the replayed agent's, else the recorded one).
 */
export interface ReplayLiveModel {
  baseURL?: string;
  apiKey?: string;
  model?: string;
}

/** Where a replay went live: the first model call past the recording. */
export interface ReplayLiveStart {
  /** That model call, counted from 1 over the whole session (the recorded calls plus one). */
  step: number;
  /** The turn it was in, counted from 1 (a turn the recording ended inside goes on live). */
  turn: number;
}

/** One user turn of a replay: the message sent and how the turn ended. */
export interface ReplayedTurn {
  /** Counted from 1. */
  turn: number;
  input: string;
  result: ExecutionResult;
}

/** Where a replay first departed from the recording. */
export type ReplayDivergence =
  | {
      /** A model request that does not hash to the recorded one (strict), or a call past the recording. */
      kind: 'request';
      /** The model call, counted from 1 over the whole session. */
      step: number;
      /** The recorded call's turn and iteration, when recorded. */
      turn?: number;
      iteration?: number;
      /**
       * The first JSON path at which the request differs, e.g. `tools[2].function.parameters.properties.path`
       * or `messages[0].content`; absent when it cannot be named (the recording lacks what was sent).
       */
      path?: string;
      /** The value at `path` in the recorded request and in this one (undefined: absent). */
      recorded?: unknown;
      actual?: unknown;
      /** True when the recorded request was rebuilt from the transcript and may not be exactly what was sent. */
      approximate?: boolean;
      message: string;
    }
  | {
      /** The run made fewer model calls than the recording. */
      kind: 'calls';
      step: number;
      recordedCalls: number;
      actualCalls: number;
      message: string;
    }
  | {
      /**
       * A turn ended in an error where the recording went on (the agent gave up on a call the
       * recording retried to an answer, an initialization that failed, ...).
       */
      kind: 'error';
      /** The model call the turn was at: calls answered so far, plus one. */
      step: number;
      turn: number;
      error: string;
      message: string;
    }
  | {
      /** A live tool's result differs from the recorded one. */
      kind: 'tool_result';
      step: number;
      toolCallId: string;
      name: string;
      recorded: string | undefined;
      actual: string;
      message: string;
    };

/** What {@link replaySession} resolves with. */
export interface ReplayResult {
  /** True when the run matched the recording: no divergence. */
  ok: boolean;
  /** The first divergence, if any. */
  divergence: ReplayDivergence | undefined;
  /** What did not stop the replay: hash differences in sequential mode, unrecorded approvals, ... */
  warnings: string[];
  /** The tool calls the replayed run made, in order. */
  trajectory: Trajectory;
  /** The last turn's result (undefined when the recording has no user message). */
  result: ExecutionResult | undefined;
  /** Every replayed turn. */
  turns: ReplayedTurn[];
  /** Model calls the replay answered from the recording (retried attempts count once). */
  modelCalls: number;
  /** With `afterRecording`: where the live part began (undefined when it did not). */
  liveFrom?: ReplayLiveStart | undefined;
  /** With `afterRecording`: model calls the live model answered. */
  liveCalls?: number;
}
