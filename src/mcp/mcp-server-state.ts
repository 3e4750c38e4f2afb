/**
 * Where a server stands: starting, ready, waiting for the user to sign in (`signin`), down (it
 * stopped; started again on next use), failed, closed.
 */
export type McpServerState = 'idle' | 'starting' | 'ready' | 'signin' | 'down' | 'failed' | 'closed';
