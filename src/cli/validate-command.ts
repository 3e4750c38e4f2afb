import { refuseBmadSource } from '../bundle/bmad-install.js';
import { BundleError, errorMessage } from '../bundle/bundle-error.js';
import { type ValidationReport, validateTree } from '../bundle/validate-tree.js';
import { parseFlags, UsageError } from './cli-args.js';
import type { CommandIo } from './command-io.js';

const USAGE = `Usage: agentloop validate [<root> | --project <dir>] [--json]
  Checks every agent, menu target, workflow and config of a tree, reading only.
  <root>           a project folder holding a BMAD install (_bmad/ of BMAD 6.0 or 6.12, bmad/ of an
                   alpha tree), that install folder itself, or a bundle root
  --project <dir>  the same as <root> (default: the current directory)
  --json           print the report as JSON
  Exit code: 0 when agents load (problems are listed, not fatal), 2 when none does or the input is unusable.
`;

function summary(report: ValidationReport): string {
  const lines = [`Validated ${report.root} (${report.layout} layout)`, ''];
  lines.push(`Agents (${report.agents.length}):`);
  for (const agent of report.agents) {
    lines.push(`  ${agent.icon} ${agent.name} - ${agent.title}  [${agent.file}]`);
    for (const item of agent.menu) {
      const status = item.status ? `  ${item.status}` : '';
      lines.push(`      ${item.cmd.padEnd(26)} ${item.kind}${status}`);
    }
  }
  lines.push('', `Workflows (${report.workflows.length}):`);
  for (const wf of report.workflows) {
    const bad = Object.values(wf.paths).filter((p) => p.status !== 'exists').length;
    const steps = wf.steps === undefined ? '' : `, ${wf.steps} steps`;
    lines.push(`  ${bad ? '!' : ' '} ${wf.name}  [${wf.file}]${steps}`);
  }
  lines.push('', `Configs (${report.configs.length}): ${report.configs.map((c) => c.file).join(', ')}`);
  lines.push('', report.problems.length ? `Problems (${report.problems.length}):` : 'No problems found.');
  for (const p of report.problems) {
    // A message may span lines (a YAML error shows the offending line): they stay under it.
    const message = p.message.split('\n').join('\n      ');
    lines.push(`  ${p.file}${p.key ? ` [${p.key}]` : ''}: ${p.status}: ${message}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `agentloop validate <root> [--json]`. Exit code 0 when the tree loads (problems are reported, not
 * fatal), 2 when the input is unusable (no such folder, no agents, bad arguments).
 */
export async function runValidateCommand(args: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags({
    args,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      project: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  const [given, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`one <root> only; also got "${extra.join('", "')}"`);
  if (given && values.project) throw new UsageError('give <root> or --project <dir>, not both');
  const root = given ?? values.project ?? process.cwd();
  let report: ValidationReport;
  try {
    report = await validateTree(root);
  } catch (error) {
    io.stderr(`agentloop validate: ${errorMessage(error)}\n`);
    return error instanceof BundleError ? 2 : 1;
  }
  io.stdout(values.json ? `${JSON.stringify(report, null, 2)}\n` : summary(report));
  if (report.agents.length === 0) {
    // Say why: the agent files that did not load are in the problems; a source tree is not an install.
    const failed = report.problems.filter((p) => p.key === 'agent' || p.key.startsWith('agents.'));
    const source = await refuseBmadSource(report.root).then(
      () => undefined,
      (error: unknown) => errorMessage(error),
    );
    io.stderr(
      `agentloop validate: ${
        source ??
        (failed.length > 0
          ? `no agent loaded under ${report.root}: ${[...new Set(failed.map((p) => p.file))].join(', ')} did not load (see the problems)`
          : `no agents under ${report.root}: no BMAD install (_bmad/, bmad/) and no bundle (agents/*.md)`)
      }\n`,
    );
    return 2;
  }
  return 0;
}
