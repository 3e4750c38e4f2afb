/** Install hint given when no PostgreSQL binaries are found. */
export const POSTGRES_PACKAGE_HINT: string;
/** The folder holding initdb and pg_ctl, or undefined. */
export function findPostgresBin(): string | undefined;
/** A running throwaway cluster. */
export interface PostgresCluster {
  url: string;
  port: number;
  dir: string;
  stop(): Promise<void>;
}
/** Starts a throwaway cluster in a temp folder on 127.0.0.1 (as `nobody` when run as root). */
export function startPostgresCluster(options?: {
  durable?: boolean;
  user?: string;
  maxConnections?: number;
}): Promise<PostgresCluster>;
