import type { SessionLease } from '../session/session-lease.js';
import { type SessionRecord, type SessionRecordInput, summarizeSession } from '../session/session-store.js';
import type { Tables } from './schema-migrations.js';

/** A save as one statement: its SQL and values. */
export interface SaveStatement {
  text: string;
  values: unknown[];
}

/** What the save statement returns: the stamps it gave the record. */
export interface SavedStamps {
  created_json: string;
  updated_at: string;
  transcript_seq: string;
}

/** A stored `updated_at` as a timestamp (NULL when it is not an ISO time: then it is ignored). */
const previousUpdated = (col: string) =>
  `(CASE WHEN ${col} ~ '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z$' THEN ${col}::timestamptz END)`;

/** `updatedAt` as `toISOString` writes it: the save clock ($4), or 1 ms after the previous one when that is later. */
const updatedAt = (previous: string) =>
  `to_char(greatest($4::timestamptz, ${previousUpdated(previous)} + interval '1 millisecond') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The record's JSON text in the layout of `storedRecordJson`, from SQL expressions for the stamps. */
const recordJson = (created: string, updated: string, seq: string) =>
  `'{"id":' || $1::text || ',"state":' || $2::text || ',"createdAt":' || ${created} || ',"updatedAt":"' || ${updated} || '","transcriptSeq":' || ${seq} || ',' || $3::text`;

/** The list summary's JSON text in the layout of `summarizeSession`. */
const summaryJson = (created: string, updated: string) =>
  `'{"id":' || $1::text || ',"createdAt":' || ${created} || ',"updatedAt":"' || ${updated} || '",' || $6::text`;

/**
 * One round trip for a save (a rest point): the stamps (`createdAt` kept, `updatedAt` after the
 * previous one, `transcriptSeq` from the row) are computed by the statement from the row it updates,
 * so no transaction and no read before the write is needed. With a lease the statement is an UPDATE
 * fenced by the lease's owner and token: a stale lease updates no row (the caller reports it).
 * With `notifySaves` the statement also notifies the schema's saves channel (clients' `waitFor` listen to it).
 * `body` is `recordBodyJson(input)`; `now` the save clock's ISO time.
 */
export function saveStatement(
  t: Tables,
  input: SessionRecordInput,
  body: string,
  now: string,
  lease: SessionLease | undefined,
  notifySaves = true,
): SaveStatement {
  const {
    id: _id,
    createdAt: _c,
    updatedAt: _u,
    ...summaryTail
  } = summarizeSession({
    ...input,
    createdAt: '',
    updatedAt: '',
    transcriptSeq: 0,
  } as SessionRecord);
  const values: unknown[] = [
    JSON.stringify(input.id),
    JSON.stringify(input.state),
    body.slice(1),
    now,
    input.createdAt === undefined ? null : JSON.stringify(input.createdAt),
    JSON.stringify(summaryTail).slice(1),
    input.id,
  ];
  const returning = 'RETURNING s.created_json, s.updated_at, s.transcript_seq';
  const notify = (write: string) =>
    notifySaves
      ? `WITH saved AS (${write}) SELECT saved.*, pg_notify($${values.length}, $7) FROM saved`
      : write;
  if (lease) {
    values.push(lease.owner, lease.token);
    if (notifySaves) values.push(t.savedChannel.slice(1, -1));
    const created = `coalesce(s.created_json, $5::text, '"' || ${updatedAt('s.updated_at')} || '"')`;
    const updated = updatedAt('s.updated_at');
    return {
      text: notify(`UPDATE ${t.sessions} s SET record = ${recordJson(created, updated, 's.transcript_seq')},
               summary = ${summaryJson(created, updated)}, updated_at = ${updated}, created_json = ${created}
             WHERE s.id = $7 AND s.lease_owner = $8 AND s.lease_token = $9 ${returning}`),
      values,
    };
  }
  if (notifySaves) values.push(t.savedChannel.slice(1, -1));
  const created = `coalesce(s.created_json, $5::text, '"' || ${updatedAt('s.updated_at')} || '"')`;
  const updated = updatedAt('s.updated_at');
  const fresh = `coalesce($5::text, '"' || ${updatedAt('NULL')} || '"')`;
  const freshUpdated = updatedAt('NULL');
  return {
    text: notify(`INSERT INTO ${t.sessions} AS s (id, record, summary, updated_at, created_json)
           VALUES ($7, ${recordJson(fresh, freshUpdated, '0')}, ${summaryJson(fresh, freshUpdated)}, ${freshUpdated}, ${fresh})
           ON CONFLICT (id) DO UPDATE SET record = ${recordJson(created, updated, 's.transcript_seq')},
             summary = ${summaryJson(created, updated)}, updated_at = ${updated}, created_json = ${created}
           ${returning}`),
    values,
  };
}

/** The record the statement stored, as `JSON.parse` of its stored text would give it. */
export function savedRecord(input: SessionRecordInput, body: string, stamps: SavedStamps): SessionRecord {
  const head = {
    id: input.id,
    state: input.state,
    createdAt: JSON.parse(stamps.created_json) as string,
    updatedAt: stamps.updated_at,
    transcriptSeq: Number(stamps.transcript_seq),
  };
  return { ...head, ...(JSON.parse(body) as object) } as SessionRecord;
}
