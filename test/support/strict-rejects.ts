import { chai } from 'vitest';

/**
 * `expect(p).rejects.toThrow(x)` passes when `p` rejects with `undefined` or `null`, whatever `x` is
 * (vitest 4: there is nothing to compare, so nothing fails). A promise that should fail with an error
 * and rejects with nothing is a bug the tests must see: this makes that assertion fail. Loaded for
 * every test file (`setupFiles` in vitest.config.ts); in the project that does not isolate files it
 * runs again before each file with the same chai, so it marks chai and wraps only once.
 */
const strictRejects: Parameters<typeof chai.use>[0] = (api, utils) => {
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
};

const WRAPPED = Symbol.for('agentloop.test.strict-rejects');
// The mark sits on what is wrapped: chai's Assertion prototype (the module namespace is frozen).
const marks = chai.Assertion.prototype as unknown as { [WRAPPED]?: true };
if (!marks[WRAPPED]) {
  marks[WRAPPED] = true;
  chai.use(strictRejects);
}
