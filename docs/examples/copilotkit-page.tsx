// A CopilotKit 1.74 page on an agentloop AG-UI server, no CopilotKit runtime: docs/serve.md quotes this
// file, and test/copilotkit-page-browser.test.ts bundles it (esbuild) and drives it in Chromium.
import {
  type AbstractAgent,
  CopilotChat,
  CopilotKitProvider,
  useInterrupt,
  useRenderTool,
} from '@copilotkit/react-core/v2';
import { AgentloopHttpAgent } from 'agentloop/server/client';
import { createRoot } from 'react-dom/client';

// The agent server's run endpoint (`agentloop serve`, or `startAgentServer`). AgentloopHttpAgent is
// `HttpAgent` with the reconnect (`connectAgent()` after a lost connection) that HttpAgent lacks.
const agent = new AgentloopHttpAgent({ url: new URL('/agents/default/runs', location.href).toString() });

/** A card per tool call: its name, then its result. */
function ToolCards() {
  useRenderTool(
    {
      name: '*',
      render: ({ name, status, result }: { name: string; status: string; result?: string }) => (
        <div className="tool-card" data-status={status}>
          {name}: {status === 'complete' ? result : 'running…'}
        </div>
      ),
    },
    [],
  );
  return null;
}

/** Approvals: agentloop ends the run with an interrupt per call that needs one; the answer resumes it. */
function Approvals() {
  useInterrupt({
    render: ({ interrupt, resolve }) => (
      <div className="approval">
        <p>{interrupt?.message}</p>
        <button type="button" onClick={() => resolve({ approved: true })}>
          Approve
        </button>
        <button type="button" onClick={() => resolve({ approved: false, reason: 'not now' })}>
          Reject
        </button>
      </div>
    ),
  });
  return null;
}

function App() {
  return (
    // CopilotKit 1.74 types its agents with the @ag-ui/client 0.0.59 it bundles; AgentloopHttpAgent is a
    // 1.0 client, which it runs as well (the cast is for TypeScript only).
    <CopilotKitProvider agents__unsafe_dev_only={{ default: agent as unknown as AbstractAgent }}>
      <ToolCards />
      <Approvals />
      <CopilotChat agentId="default" />
    </CopilotKitProvider>
  );
}

createRoot(document.getElementById('root')!).render(<App />);
