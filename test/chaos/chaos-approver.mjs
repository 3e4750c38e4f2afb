// The chaos client process: answers every pending approval it sees, twice at once (two browsers),
// and records what each answer returned. Stops on SIGTERM.
import { appendFileSync } from 'node:fs';
import { createSessionClient } from '../../dist/index.js';
import { PostgresSessionStore } from '../../dist/postgres/index.js';

const config = JSON.parse(process.argv[2]);
const store = new PostgresSessionStore({ connectionString: config.url, max: 4 }, { schema: config.schema });
const client = createSessionClient({ store });
let running = true;
process.on('SIGTERM', () => {
  running = false;
});
while (running) {
  const rows = await store.list();
  for (const row of rows) {
    if (row.error !== undefined || row.state !== 'WaitingApproval') continue;
    const view = await client.get(row.id).catch(() => undefined);
    for (const call of view?.pendingApprovals ?? []) {
      const answers = await Promise.all([
        client.approve(row.id, call.toolCallId),
        client.approve(row.id, call.toolCallId),
      ]);
      for (const accepted of answers) {
        appendFileSync(
          config.approvals,
          `${JSON.stringify({ session: row.id, toolCallId: call.toolCallId, accepted })}\n`,
        );
      }
    }
  }
  await new Promise((r) => setTimeout(r, 30));
}
await store.close();
process.exit(0);
