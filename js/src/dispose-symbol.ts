/**
 * `Symbol.dispose` for TypeScript users whose `lib` lacks `esnext.disposable`
 * (e.g. `lib: ["es2022", "dom"]`): the published `.d.ts` files that declare a
 * `[Symbol.dispose]()` method import this module, so they type-check there too.
 * It merges with the lib's own declaration when that is present. Runtimes:
 * Node >= 20 and current browsers define `Symbol.dispose`.
 */
declare global {
  interface SymbolConstructor {
    /** The method `using` calls at the end of its block (explicit resource management). */
    readonly dispose: unique symbol;
  }
}

export {};
