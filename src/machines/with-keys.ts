/**
 * A copy of `base` with the keys of `extra` set: `{ ...base, ...extra }`, for a copy that gains keys
 * `base` lacks. On Node 20 (V8 11.3) the object a spread makes has a shape outside V8's shape tree, so
 * each key then added to it makes new shapes every time (about 1 us a key, and garbage only a full GC
 * collects; bench/README.md, xs36); `Object.assign` onto a new object keeps to the tree. Same keys, in
 * the same order, as the spread. A spread that only replaces keys `base` has is fine as it is.
 */
export function withKeys<T extends object, U extends object>(base: T, extra: U): Omit<T, keyof U> & U {
  return Object.assign({}, base, extra);
}
