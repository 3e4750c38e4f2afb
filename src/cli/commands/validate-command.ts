import path from 'node:path';
import { refuseBmadSource } from '../../bundle/bmad6/bmad-install.js';
import { BundleError, errorMessage } from '../../bundle/bundle-error.js';
import { validateTree } from '../../bundle/validation/validate-tree.js';
import type { ValidationReport } from '../../bundle/validation/validation-report.js';
import type { SkillProblem } from '../../skills/skill.js';
import { type SkillValidation, validateSkills } from '../../skills/skill-validation.js';
import { SKILLS_FLAG } from '../cli-agent.js';
import { parseFlags, UsageError } from '../cli-args.js';
import type { CommandIo } from '../command-io.js';

const USAGE = `Usage: agentloop validate [<root> | --project <dir>] [--skills <dir>]... [--json]
  Checks every agent, menu target, workflow and config of a tree, and the Agent Skills of the project
  (.agents/skills, .claude/skills and each --skills folder), reading only.
  <root>          a project folder holding a BMAD install (_bmad/ of BMAD 6.0 or 6.12, bmad/ of an
                  alpha tree), that install folder itself, or a bundle root
  --project <dir> the same as <root> (default: the current directory)
  --skills <dir>  a folder of Agent Skills to check too (repeatable)
  --json          print the report as JSON: { root, layout, agents, workflows, configs, skills, problems }
  Exit code: 0 when agents or skills load (problems are listed, not fatal), 2 when none does or the
  input is unusable.
`;

/** A skill problem as the report lists it, beside the tree's problems. */
interface SkillReportProblem {
  file: string;
  key: string;
  value: string;
  /** \`skill-<kind>\`, e.g. \`skill-duplicate\`, \`skill-too-large\`, \`skill-missing-resource\`. */
  status: `skill-${SkillProblem['kind']}`;
  message: string;
  /** Whether the skill was left out. */
  skipped: boolean;
}

function skillProblem(root: string, p: SkillProblem): SkillReportProblem {
  const rel = path.relative(root, p.file);
  const file = rel.startsWith('..') || path.isAbsolute(rel) ? p.file : rel || '.';
  const message = p.message.startsWith(`${p.file}: `) ? p.message.slice(p.file.length + 2) : p.message;
  return { file, key: p.key, value: '', status: `skill-${p.kind}`, message, skipped: p.skipped };
}

function skillLines(validation: SkillValidation): string[] {
  const lines = ['', `Skills (${validation.skills.length}):`];
  for (const skill of validation.skills) {
    const extra = [`${skill.resources} file${skill.resources === 1 ? '' : 's'}`];
    if (skill.hasScripts) extra.push('scripts (never run)');
    if (skill.missingLinks.length) extra.push(`${skill.missingLinks.length} missing link(s)`);
    lines.push(
      `  ${skill.missingLinks.length ? '!' : ' '} ${skill.name}  [${skill.file}]  ${extra.join(', ')}`,
    );
    const description = skill.description.replace(/\s+/g, ' ');
    lines.push(`      ${description.length > 100 ? `${description.slice(0, 99)}…` : description}`);
  }
  return lines;
}

/** A menu item's label without its `[CODE]` prefix, cut to one short line. */
function menuLabel(label: string): string {
  const text = label.replace(/^\[[^\]]*\]\s*/, '').replace(/\s+/g, ' ');
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

function summary(report: ValidationReport, skills: SkillValidation): string {
  const lines = [`Validated ${report.root} (${report.layout} layout)`, ''];
  lines.push(`Agents (${report.agents.length}):`);
  for (const agent of report.agents) {
    lines.push(`  ${agent.icon} ${agent.name} - ${agent.title}  [${agent.file}]`);
    for (const item of agent.menu) {
      const status = item.status ? `  ${item.status}` : '';
      // BMAD 6.0 items say how to match them (`CP or fuzzy match on create-prd`): the code, and the label.
      const code = item.cmd.split(/\s+/)[0] ?? item.cmd;
      const label = code === item.cmd ? '' : `  ${menuLabel(item.label)}`;
      lines.push(`      ${code.padEnd(26)} ${item.kind}${status}${label}`);
    }
  }
  lines.push('', `Workflows (${report.workflows.length}):`);
  for (const wf of report.workflows) {
    const bad = Object.values(wf.paths).filter((p) => p.status !== 'exists').length;
    const steps = wf.steps === undefined ? '' : `, ${wf.steps} steps`;
    lines.push(`  ${bad ? '!' : ' '} ${wf.name}  [${wf.file}]${steps}`);
  }
  lines.push('', `Configs (${report.configs.length}): ${report.configs.map((c) => c.file).join(', ')}`);
  lines.push(...skillLines(skills));
  const problems = [...report.problems, ...skills.problems.map((p) => skillProblem(report.root, p))];
  lines.push('', problems.length ? `Problems (${problems.length}):` : 'No problems found.');
  for (const p of problems) {
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
      ...SKILLS_FLAG,
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
  const skills = await validateSkills({
    projectRoot: report.root,
    dirs: (values.skills ?? []).map((d) => path.resolve(d)),
  });
  const json = {
    ...report,
    skills: skills.skills,
    problems: [...report.problems, ...skills.problems.map((p) => skillProblem(report.root, p))],
  };
  io.stdout(values.json ? `${JSON.stringify(json, null, 2)}\n` : summary(report, skills));
  if (report.agents.length === 0) {
    // Say why: a source tree is not an install (said even when it holds skills of its own); the
    // agent files that did not load are in the problems.
    const source = await refuseBmadSource(report.root).then(
      () => undefined,
      (error: unknown) => errorMessage(error),
    );
    if (source) io.stderr(`agentloop validate: ${source}\n`);
    if (skills.skills.length > 0) return 0;
    const failed = report.problems.filter((p) => p.key === 'agent' || p.key.startsWith('agents.'));
    if (!source) {
      io.stderr(
        `agentloop validate: ${
          failed.length > 0
            ? `no agent loaded under ${report.root}: ${[...new Set(failed.map((p) => p.file))].join(', ')} did not load (see the problems)`
            : `no agent files under ${report.root} (no BMAD install: _bmad/ or bmad/; no bundle: agents/*.md) and no Agent Skills (.agents/skills, .claude/skills, --skills)`
        }\n`,
      );
    }
    return 2;
  }
  return 0;
}
