/**
 * `@restatedev/restate-sdk` 1.17 calls `Promise.withResolvers` (Node 22+) in every invocation; Node 20
 * lacks it, and every call to the endpoint then fails. Rather than pin an older SDK, the adapter
 * provides the function where it is missing (importing `agentloop/restate` installs it; on Node 22
 * it changes nothing).
 */
export function providePromiseWithResolvers(): void {
  const promise = Promise as unknown as { withResolvers?: unknown };
  if (typeof promise.withResolvers === 'function') return;
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>() {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      const made = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise: made, resolve, reject };
    },
  });
}
