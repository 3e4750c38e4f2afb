import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, cliPath, repoRoot } from './support/build-dist.js';
import { runCli } from './support/cli-process.js';

/** An OTLP/HTTP collector stand-in on 127.0.0.1: it keeps each JSON body posted to /v1/traces. */
function otlpListener() {
  const bodies: unknown[] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (text += d));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        expect(req.headers['content-type']).toMatch(/application\/json/);
        bodies.push(JSON.parse(text));
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return {
    bodies,
    start: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () =>
          resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
        ),
      ),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes: { key: string; value: Record<string, unknown> }[];
}

/** The spans of OTLP JSON bodies, checked against the shape the protocol gives them. */
function spansOf(bodies: unknown[]): { service: unknown; spans: OtlpSpan[] } {
  const spans: OtlpSpan[] = [];
  let service: unknown;
  for (const body of bodies) {
    const { resourceSpans } = body as { resourceSpans: unknown[] };
    expect(Array.isArray(resourceSpans)).toBe(true);
    for (const rs of resourceSpans as {
      resource: { attributes: OtlpSpan['attributes'] };
      scopeSpans: { spans: OtlpSpan[] }[];
    }[]) {
      service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue;
      for (const scope of rs.scopeSpans) spans.push(...scope.spans);
    }
  }
  for (const span of spans) {
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(Number(span.endTimeUnixNano)).toBeGreaterThanOrEqual(Number(span.startTimeUnixNano));
    expect([1, 2, 3, 4, 5]).toContain(span.kind);
  }
  return { service, spans };
}

describe('agentloop --otel', () => {
  const listener = otlpListener();
  let endpoint = '';
  let dir = '';
  beforeAll(async () => {
    await buildDist();
    endpoint = await listener.start();
    dir = await mkdtemp(path.join(tmpdir(), 'agentloop-otel-'));
  }, 120_000);
  afterAll(async () => {
    await listener.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('run exports the turn over OTLP/HTTP as valid OTLP JSON, service agentloop', async () => {
    const scenario = path.join(dir, 'scenario.yaml');
    await writeFile(scenario, 'turns:\n  - content: hello there\n');
    const result = await runCli(['run', '--otel', '--scenario', scenario, 'say hello'], {
      cwd: dir,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint },
    });
    expect(result.stderr).toContain(`--otel: traces go to ${endpoint}`);
    expect(result.code).toBe(0);
    const { service, spans } = spansOf(listener.bodies);
    expect(service).toBe('agentloop');
    const root = spans.find((s) => s.name.startsWith('invoke_agent '))!;
    const chat = spans.find((s) => s.name.startsWith('chat '))!;
    expect(chat.parentSpanId).toBe(root.spanId);
    expect(chat.kind).toBe(3); // CLIENT
    const attribute = (span: OtlpSpan, key: string) => span.attributes.find((a) => a.key === key)?.value;
    expect(attribute(root, 'gen_ai.operation.name')).toEqual({ stringValue: 'invoke_agent' });
    expect(attribute(root, 'agentloop.terminate_reason')).toEqual({ stringValue: 'completed' });
  }, 60_000);

  it("run joins the caller's trace that TRACEPARENT / TRACESTATE name; a bad TRACEPARENT is named", async () => {
    const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parent = '00f067aa0ba902b7';
    const scenario = path.join(dir, 'traced.yaml');
    await writeFile(scenario, 'turns:\n  - content: joined\n');
    listener.bodies.length = 0;
    const joined = await runCli(['run', '--otel', '--scenario', scenario, 'say hello'], {
      cwd: dir,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        TRACEPARENT: `00-${trace}-${parent}-01`,
        TRACESTATE: 'promptfoo=eval-1',
      },
    });
    expect(joined.code, joined.stderr).toBe(0);
    const root = spansOf(listener.bodies).spans.find((s) => s.name.startsWith('invoke_agent '))!;
    expect(root.traceId).toBe(trace);
    expect(root.parentSpanId).toBe(parent);
    expect((root as OtlpSpan & { traceState?: string }).traceState).toBe('promptfoo=eval-1');

    listener.bodies.length = 0;
    const bad = await runCli(['run', '--otel', '--scenario', scenario, 'say hello'], {
      cwd: dir,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, TRACEPARENT: 'not-a-trace' },
    });
    expect(bad.code, bad.stderr).toBe(0);
    expect(bad.stderr).toContain('--otel: TRACEPARENT is not a W3C traceparent');
    expect(bad.stderr).toContain('"not-a-trace"');
    const own = spansOf(listener.bodies).spans.find((s) => s.name.startsWith('invoke_agent '))!;
    expect(own.parentSpanId ?? '').toBe('');
  }, 60_000);

  it('without the SDK installed, one line names the install command and the command runs', async () => {
    // The built package beside a node_modules holding everything but @opentelemetry.
    const bare = path.join(dir, 'bare');
    await mkdir(path.join(bare, 'node_modules'), { recursive: true });
    await cp(path.join(repoRoot, 'dist'), path.join(bare, 'dist'), { recursive: true });
    await cp(path.join(repoRoot, 'package.json'), path.join(bare, 'package.json'));
    for (const name of await readdir(path.join(repoRoot, 'node_modules')))
      if (name !== '@opentelemetry')
        await symlink(path.join(repoRoot, 'node_modules', name), path.join(bare, 'node_modules', name));
    const scenario = path.join(dir, 'bare.yaml');
    await writeFile(scenario, 'turns:\n  - content: still here\n');
    const child = spawn(
      process.execPath,
      [path.join(bare, 'dist', 'cli', 'main.js'), 'run', '--otel', '--scenario', scenario, 'hi'],
      {
        cwd: dir,
        env: { ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '', NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(stderr.match(/--otel: .*/g)).toEqual([
      expect.stringMatching(
        /SDK is not installed.*npm install @opentelemetry\/api @opentelemetry\/sdk-trace-base/,
      ),
    ]);
    expect(stdout).toBe('still here\n');
    expect(code).toBe(0);
  }, 60_000);

  it('demo exports both of its agents', async () => {
    listener.bodies.length = 0;
    const result = await runCli(['demo', '--otel'], {
      cwd: dir,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint },
    });
    expect(result.code).toBe(0);
    const { spans } = spansOf(listener.bodies);
    const turns = spans.filter((s) => s.name.startsWith('invoke_agent '));
    // The notes agent and the bundle's facilitator (a turn per message of its workflow): a trace each.
    expect(new Set(turns.map((t) => t.name)).size).toBe(2);
    expect(new Set(turns.map((t) => t.traceId)).size).toBe(turns.length);
    expect(spans.some((s) => s.name.startsWith('execute_tool '))).toBe(true);
  }, 60_000);

  it('worker exports the turns it carries and flushes them when SIGTERM stops it', async () => {
    listener.bodies.length = 0;
    const sessions = path.join(dir, 'worker-sessions');
    const scenario = path.join(dir, 'worker.yaml');
    await writeFile(scenario, 'turns:\n  - content: carried by the worker\n');
    const bundle = path.join(repoRoot, 'bundles', 'requirements-workflow');
    const env = { ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '', NO_COLOR: '1' };
    const worker = spawn(
      process.execPath,
      [
        cliPath,
        'worker',
        '--otel',
        '--store',
        sessions,
        '--bundle',
        bundle,
        '--agent',
        'intake-facilitator',
        '--scenario',
        scenario,
      ],
      {
        cwd: dir,
        env: {
          ...env,
          OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
          TRACEPARENT: `00-${'a1'.repeat(16)}-${'b2'.repeat(8)}-01`,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    worker.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => worker.on('exit', (code) => resolve(code)));
    try {
      await expect.poll(() => stderr, { timeout: 30_000 }).toMatch(/Ctrl-C stops/);
      expect(stderr).toContain(`--otel: traces go to ${endpoint}`);
      const sent = await runCli(['send', '--store', sessions, '--session', 'w-1', 'hello', '--wait'], {
        cwd: dir,
        timeoutMs: 60_000,
      });
      expect(sent.code, sent.stderr).toBe(0);
      expect(sent.stdout).toBe('carried by the worker\n');
      worker.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      worker.kill('SIGKILL');
    }
    const { service, spans } = spansOf(listener.bodies);
    expect(service).toBe('agentloop');
    const root = spans.find((s) => s.name.startsWith('invoke_agent '))!;
    expect(root).toBeDefined();
    const chat = spans.find((s) => s.name.startsWith('chat '))!;
    expect(chat.parentSpanId).toBe(root.spanId);
    expect(root.attributes.find((a) => a.key === 'gen_ai.conversation.id')?.value).toEqual({
      stringValue: 'w-1',
    });
    // The message carried no trace of its own: the turn joined the one TRACEPARENT names.
    expect(root.traceId).toBe('a1'.repeat(16));
    expect(root.parentSpanId).toBe('b2'.repeat(8));
  }, 90_000);

  it('Ctrl-C in the middle of a turn still exports its spans before the process ends', async () => {
    listener.bodies.length = 0;
    const scenario = path.join(dir, 'slow.yaml');
    await writeFile(scenario, 'turns:\n  - content: too late\n    delayMs: 20000\n');
    const child = spawn(process.execPath, [cliPath, 'run', '--otel', '--scenario', scenario, 'wait'], {
      cwd: dir,
      env: { ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    await expect.poll(() => stderr, { timeout: 20_000 }).toMatch(/model: /);
    await new Promise((r) => setTimeout(r, 300));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    const { spans } = spansOf(listener.bodies);
    const root = spans.find((s) => s.name.startsWith('invoke_agent '))!;
    expect(root.attributes.find((a) => a.key === 'agentloop.terminate_reason')?.value).toEqual({
      stringValue: 'interrupted',
    });
  }, 60_000);
});
