/** A Restate server started for tests: its ingress and admin URLs. */
export interface RestateServer {
  ingress: string;
  admin: string;
  /** Registers a deployment (an endpoint serving services) with the server. */
  register(uri: string): Promise<void>;
  /** Stops the server process and keeps its data (the engine gone mid-turn). */
  halt(): Promise<void>;
  /** Starts it again on the same data folder and ports. */
  resume(): Promise<void>;
  /** Stops it and removes its data. */
  stop(): Promise<void>;
}
/** The restate-server binary of the `@restatedev/restate-server` dev dependency, or why it cannot run here. */
export function restateServerBinary(): { path: string } | { missing: string };
/** Starts restate-server on 127.0.0.1 with OS-chosen ports and its data in a temp folder. */
export function startRestateServer(): Promise<RestateServer>;
