import { chai } from 'vitest';

/**
 * `expect(p).rejects.toThrow(x)` passes when `p` rejects with `undefined` or `null`, whatever `x` is
 * (vitest 4: there is nothing to compare, so nothing fails). A promise that should fail with an error
 * and rejects with nothing is a bug the tests must see: this makes that assertion fail. Loaded for
 * every test file (`setupFiles` in vitest.config.ts).
 */
chai.use((api, utils) => {
  for (const name of ['toThrow', 'toThrowError']) {
    utils.overwriteMethod(
      api.Assertion.prototype,
      name,
      (original: (...args: unknown[]) => unknown) =>
        function (this: object, ...args: unknown[]) {
          const value = utils.flag(this, 'object');
          if (utils.flag(this, 'promise') === 'rejects' && !utils.flag(this, 'negate') && value == null) {
            throw new api.AssertionError(
              `expected the promise to reject with an error, but it rejected with ${value}`,
            );
          }
          return original.apply(this, args);
        },
    );
  }
});
