/** A Restate server started for tests: its ingress and admin URLs. */
export interface RestateServer {
  ingress: string;
  admin: string;
  /** Registers a deployment (an endpoint serving services) with the server. */
  register(uri: string): Promise<void>;
  stop(): Promise<void>;
}
/** The restate-server binary of the `@restatedev/restate-server` dev dependency, or why it cannot run here. */
export function restateServerBinary(): { path: string } | { missing: string };
/** Starts restate-server on 127.0.0.1 with OS-chosen ports and its data in a temp folder. */
export function startRestateServer(): Promise<RestateServer>;
