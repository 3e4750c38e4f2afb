// The scripted model in a child process of its own, so that its CPU never counts in the bench's: one
// text answer (the task's FINAL_ANSWER) to anything. A bench script runs `serveScriptedModel()` when
// started with `--role=model`, and `spawnScriptedModel(itself)` to start that child.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { OpenAI } from './root-deps.mjs';
import { FINAL_ANSWER, MODEL, SYSTEM_PROMPT } from './task.mjs';

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist');

/** In the child: serves the model, writes its URL as the first stdout line, ends when stdin ends. */
export async function serveScriptedModel() {
  const { startScriptedServer } = await import(pathToFileURL(path.join(dist, 'testing', 'index.js')).href);
  const server = await startScriptedServer({
    respond: () => ({ content: FINAL_ANSWER }),
    record: false,
    keepAliveTimeoutMs: 120_000,
  });
  process.stdout.write(`${server.url}\n`);
  process.stdin.on('end', async () => {
    await server.close();
    process.exit(0);
  });
  process.stdin.resume();
}

/** Starts `script --role=model` and resolves with the model's base URL, its `pid` and `stop()` (ends the child). */
export async function spawnScriptedModel(script) {
  const child = spawn(process.execPath, [script, '--role=model'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const baseURL = await new Promise((resolve) => {
    let buffer = '';
    child.stdout.on('data', (d) => {
      buffer += d;
      if (buffer.includes('\n')) resolve(buffer.slice(0, buffer.indexOf('\n')));
    });
  });
  return { baseURL, pid: child.pid, stop: () => child.stdin.end() };
}

/**
 * The agent options of the MCP benches' text turn against the scripted model at `baseURL` (the same
 * in the bench process and in a server child given the URL): no loop-control tools, no planning, no
 * context-window checks.
 */
export function textTurnOptions(baseURL) {
  return {
    client: new OpenAI({ baseURL, apiKey: 'bench', maxRetries: 0 }),
    model: MODEL,
    instructions: SYSTEM_PROMPT,
    loopControlTools: false,
    planning: false,
    contextWindow: false,
  };
}
