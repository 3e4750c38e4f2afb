/**
 * `agentloop/testing/stores`: the conformance suite every session store passes (memory, file,
 * PostgreSQL), for authors of their own store (Redis, DynamoDB, SQLite) to run in their own tests.
 * See docs/store-conformance.md.
 *
 * A subpath of its own, not `agentloop/testing`: the suite checks the `SessionStore` contract of
 * `session/`, which sits above the scripted server's `testing/` folder in the layering
 * (docs/architecture.md), so it lives in `store-conformance/`, beside the stores.
 */
export { describeSessionStoreConformance } from './conformance-suite.js';
export type { StoreUnderTest, TestApi } from './test-api.js';
