import { BundleError, errorMessage } from '../bundle/bundle-error.js';
import { type ValidationReport, validateTree } from '../bundle/validate-tree.js';
import type { CommandIo } from './command-io.js';

const USAGE =
  'Usage: agentloop validate <root> [--json]\n  <root>: a project folder holding bmad/, a bmad/ folder, or a bundle root';

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
    lines.push(`  ${p.file}${p.key ? ` [${p.key}]` : ''}: ${p.status}: ${p.message}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `agentloop validate <root> [--json]`. Exit code 0 when the tree loads (problems are reported, not
 * fatal), 2 when the input is unusable (no such folder, no agents, bad arguments).
 */
export async function runValidateCommand(args: string[], io: CommandIo): Promise<number> {
  const json = args.includes('--json');
  const rest = args.filter((a) => a !== '--json');
  if (rest.some((a) => a === '-h' || a === '--help')) {
    io.stdout(`${USAGE}\n`);
    return 0;
  }
  const [root, ...extra] = rest;
  if (!root || extra.length > 0 || root.startsWith('-')) {
    io.stderr(`${USAGE}\n`);
    return 2;
  }
  let report: ValidationReport;
  try {
    report = await validateTree(root);
  } catch (error) {
    io.stderr(`agentloop validate: ${errorMessage(error)}\n`);
    return error instanceof BundleError ? 2 : 1;
  }
  if (report.agents.length === 0) {
    if (json) io.stdout(`${JSON.stringify(report, null, 2)}\n`);
    io.stderr(`agentloop validate: no agents found under ${report.root}\n`);
    return 2;
  }
  io.stdout(json ? `${JSON.stringify(report, null, 2)}\n` : summary(report));
  return 0;
}
