import path from 'node:path';

/** What selects the sessions folder of the file session store. */
export interface SessionsDirOptions {
  /** The sessions folder itself; wins over `AGENTLOOP_HOME` and `projectRoot`. */
  dir?: string;
  /** Sessions go to `<projectRoot>/.agentloop/sessions` unless `AGENTLOOP_HOME` is set. Defaults to the cwd. */
  projectRoot?: string;
  /** Where `AGENTLOOP_HOME` is read; defaults to `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * The sessions folder the options select: `dir`, else `$AGENTLOOP_HOME/sessions`, else
 * `<projectRoot>/.agentloop/sessions`: the file session store's rule, in a root file so that
 * `bundle/`'s sandbox (which may not import `session/`) refuses the same folder.
 */
export function resolveSessionsDir(options: SessionsDirOptions = {}): string {
  if (options.dir) return path.resolve(options.dir);
  const home = (options.env ?? process.env).AGENTLOOP_HOME;
  if (home) return path.resolve(home, 'sessions');
  return path.resolve(options.projectRoot ?? process.cwd(), '.agentloop', 'sessions');
}
