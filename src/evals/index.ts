/**
 * `agentloop/evals`: test what an agent does from its recorded runs (docs/evals.md): reading a
 * recording (`Cassette`), running an agent again against it (`replaySession`), the trajectory of a
 * conversation or transcript and matching it against an expected one, eval suites in YAML
 * (`runEvalSuite`), and forking a session at a rest point (`forkSession`).
 */
export type { RecordedCall, RecordedCompaction } from './cassette.js';
export { Cassette, CassetteError } from './cassette.js';
export type { CaseOutcome } from './eval-expectations.js';
export type { EvalCase, EvalSuite } from './eval-suite-file.js';
export { EvalSuiteError, loadEvalSuite } from './eval-suite-file.js';
export { forkCutProblem, forkPoints } from './fork-point.js';
export type { ForkOptions, ForkResult, SessionForkedData } from './fork-session.js';
export { ForkError, forkSession, SESSION_FORKED_EVENT } from './fork-session.js';
export type {
  ReplayAgent,
  ReplayApprovalAnswer,
  ReplayApprovalCall,
  ReplayDivergence,
  ReplayedTurn,
  ReplayLiveModel,
  ReplayLiveStart,
  ReplayMatch,
  ReplayOptions,
  ReplayResult,
  ReplayTools,
} from './replay-options.js';
export { replaySession } from './replay-session.js';
export type { EvalCaseResult, EvalReport, RunEvalSuiteOptions } from './run-eval-suite.js';
export { runEvalSuite } from './run-eval-suite.js';
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
