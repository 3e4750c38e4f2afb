import type { Agent } from '../../agent/agent.js';
import type { TranscriptFeed } from '../transcript-feed.js';

/** A run this process is carrying: its agent, and whether a cancel was asked for. */
export interface ActiveRun {
  runId: string;
  agent: Agent;
  cancelled: boolean;
  /** Resolves once the run has ended and its agent let the session go. */
  done: Promise<void>;
  /** The session's transcript as this run writes it (for reconnecting clients in this process). */
  feed?: TranscriptFeed;
}

/** Runs by thread id, in this process. */
export type ActiveRuns = Map<string, ActiveRun>;
