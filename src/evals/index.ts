/**
 * `agentloop/evals`: test what an agent does from its recorded runs (docs/evals.md). So far: reading a
 * recording (`Cassette`), forking a session at a rest point (`forkSession`), the trajectory of a
 * conversation or transcript, and matching it against an expected one.
 */
export type { RecordedCall } from './cassette.js';
export { Cassette, CassetteError } from './cassette.js';
export { forkCutProblem, forkPoints } from './fork-point.js';
export type { ForkOptions, ForkResult, SessionForkedData } from './fork-session.js';
export { ForkError, forkSession, SESSION_FORKED_EVENT } from './fork-session.js';
export type { Trajectory, TrajectoryStep } from './trajectory.js';
export { trajectoryOf } from './trajectory.js';
export type {
  ArgsMatch,
  ExpectedStep,
  TrajectoryMatchOptions,
  TrajectoryMode,
  TrajectoryVerdict,
} from './trajectory-match.js';
export { trajectoryMatch } from './trajectory-match.js';
export type { TrajectoryMessage } from './trajectory-messages.js';
export { trajectoryMessages } from './trajectory-messages.js';
