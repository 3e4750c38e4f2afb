/** The HTTP/2 proxy standing for a load balancer in front of Restate endpoints (h2-proxy.mjs). */
export interface H2Proxy {
  port: number;
  /** Ends the connection to the endpoint on `port` (its process is known dead). */
  drop(port: number): void;
  close(): void;
}
/** Starts the proxy on 127.0.0.1; `pick(headers)` names a live endpoint's port for each request. */
export function startH2Proxy(options: {
  pick: (headers: Record<string, string | string[] | undefined>) => number | undefined;
  log?: (line: string) => void;
}): Promise<H2Proxy>;
