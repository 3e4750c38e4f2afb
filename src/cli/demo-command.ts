import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pc from 'picocolors';
import { createAgent } from '../session/agent.js';
import { runBundleDemo } from './bundle-demo.js';
import type { CommandIo } from './command-io.js';
import { createEventPrinter } from './event-printer.js';
import { connectModel } from './model-connection.js';
import { notesDemoQuestion, notesDemoScenario, notesTools } from './notes-demo.js';

/** The package root (dist/cli/ or src/cli/ are two levels below it). */
export const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * `agentloop demo`: first an agent with three real file tools answers a question about
 * `examples/notes`; then the example bundle's facilitator runs `*intake-workflow` and saves a document.
 * Every event is printed as it happens. Runs on the scripted model unless OPENAI_API_KEY is set.
 */
export async function runDemoCommand(_args: string[], io: CommandIo): Promise<number> {
  const connection = await connectModel({}, notesDemoScenario);
  const out = { write: (s: string) => io.stdout(s) };
  try {
    io.stdout(pc.bold(`agentloop demo: ${connection.description}\n`));
    io.stdout(pc.bold('Part 1: an agent with three file tools over examples/notes\n\n'));
    const notesRoot = path.join(packageRoot, 'examples', 'notes');
    const agent = createAgent({
      baseURL: connection.baseURL,
      apiKey: connection.apiKey,
      model: connection.model,
      instructions:
        'You answer questions about the notes in a folder. Use the tools to list, read and search them; read ' +
        'everything you cite. Answer in a short paragraph.',
      tools: notesTools(notesRoot),
      loopControlTools: false,
    });
    agent.on('*', createEventPrinter(out));
    io.stdout(`${pc.bold('you:')} ${notesDemoQuestion}\n`);
    const result = await agent.send(notesDemoQuestion);
    io.stdout(
      `\n${pc.bold('result:')} ${result.terminateReason}, ${result.iterations} model calls, ` +
        `${result.messages.length} messages, ${result.usage.totalTokens} tokens\n`,
    );
    agent.stop();
    if (!result.success) return 1;
  } finally {
    await connection.close();
  }
  io.stdout(
    pc.bold('\nPart 2: a BMAD bundle agent (bundles/requirements-workflow), files loaded only on demand\n'),
  );
  const ok = await runBundleDemo(io, path.join(packageRoot, 'bundles', 'requirements-workflow'));
  return ok ? 0 : 1;
}
