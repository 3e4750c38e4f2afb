// The root package's `openai` and `zod`, the very modules dist/ uses. Harness files live in bench/,
// where a bare `import 'openai'` would find bench/node_modules (installed for the peers) first.
export { default as OpenAI } from '../../node_modules/openai/index.mjs';
export { z } from '../../node_modules/zod/index.js';
