import type { SessionStore } from '../session/session-store.js';
import { crashCases } from './crash-cases.js';
import { ownershipCases } from './ownership-cases.js';
import {
  deleteCases,
  listCases,
  orderAndIsolationCases,
  saveAndLoadCases,
  sessionIdCases,
} from './record-cases.js';
import type { StoreHandle, StoreUnderTest, TestApi } from './test-api.js';
import { transcriptCases } from './transcript-cases.js';

/**
 * Registers the tests every {@link SessionStore} must pass (the pattern of LangGraph's
 * checkpoint-validation): records, `list`, `delete`, session ids, the transcript (seq, call order,
 * idempotency keys), leases and fencing, the inbox, and, when `subject.reopen` is given, what a
 * process finds after a crash. Each test gets a new store from `subject.create()`.
 *
 * Call it at the top level of a test file with the runner's functions:
 *
 * ```ts
 * import { afterEach, beforeEach, describe, it } from 'vitest';
 * import { describeSessionStoreConformance } from 'agentloop/testing/stores';
 *
 * describeSessionStoreConformance({ describe, it, beforeEach, afterEach }, {
 *   name: 'RedisSessionStore',
 *   create: () => new RedisSessionStore(...),
 * });
 * ```
 */
export function describeSessionStoreConformance(test: TestApi, subject: StoreUnderTest): void {
  test.describe(`SessionStore conformance: ${subject.name}`, () => {
    let current: SessionStore | undefined;
    let reopened: SessionStore[] = [];

    test.beforeEach(async () => {
      current = await subject.create();
    });

    test.afterEach(async () => {
      const opened = reopened;
      reopened = [];
      for (const store of opened) await subject.close?.(store);
      if (current) await subject.dispose?.(current);
      current = undefined;
    });

    const store = (() => {
      if (!current) throw new Error('the store is made in beforeEach: use it inside a test');
      return current;
    }) as StoreHandle;
    store.reopen = async () => {
      if (!subject.reopen) throw new Error(`${subject.name} has no reopen()`);
      const again = await subject.reopen(store());
      reopened.push(again);
      return again;
    };

    test.describe('save and load', () => saveAndLoadCases(test, store));
    test.describe('list', () => listCases(test, store));
    test.describe('delete', () => deleteCases(test, store));
    test.describe('transcript', () => transcriptCases(test, store));
    test.describe('call order and isolation', () => orderAndIsolationCases(test, store));
    test.describe('session ids', () => sessionIdCases(test, store));
    test.describe('ownership and inbox', () => ownershipCases(test, store));
    if (subject.reopen) test.describe('after a crash', () => crashCases(test, store));
  });
}
