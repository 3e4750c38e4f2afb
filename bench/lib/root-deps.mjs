// The root package's `openai`, `zod` and `xstate`, the very modules dist/ uses (`xstate.cjs.mjs` is what
// `import 'xstate'` resolves to in Node). Harness files live in bench/, where a bare import would find
// bench/node_modules (installed for the peers) first.
export { default as OpenAI } from '../../node_modules/openai/index.mjs';
export {
  assign,
  createActor,
  fromCallback,
  fromPromise,
  sendTo,
  setup,
  toPromise,
} from '../../node_modules/xstate/dist/xstate.cjs.mjs';
export { z } from '../../node_modules/zod/index.js';

/** A module of the root package's MCP SDK (`@modelcontextprotocol/sdk`'s ESM build), as a URL to `import()`. */
export const mcpSdk = (file) =>
  new URL(`../../node_modules/@modelcontextprotocol/sdk/dist/esm/${file}`, import.meta.url).href;
