import { createHash } from 'node:crypto';

/** A statement `pg` prepares once per connection (a query config with a name and its text). */
export interface NamedStatement {
  name: string;
  text: string;
}

/**
 * `text` as a named statement: PostgreSQL parses it once per connection and, after a few runs,
 * keeps a generic plan, instead of parsing and planning it on every run (an unnamed statement's
 * planning was most of the PostgreSQL time of the adapter's per-turn statements: bench/README.md,
 * "DBOS: what PostgreSQL runs for a session"). The name is derived from the text, so one pool can
 * carry the statements of several schemas; `pg` refuses one name for two texts.
 */
export function namedStatement(text: string): NamedStatement {
  return { name: `agentloop_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`, text };
}
