// Two differently built copies of webdlpack for tests/browser/protocol-versions.spec.ts:
//   build/protocol-test/current.js  js/src/index.ts as it is (context protocol 1.3)
//   build/protocol-test/older.js    the same source built as a protocol-1.1 copy: its
//                                   CONTEXT_PROTOCOL says minor 1 and the contexts it makes lack
//                                   the members minors 2 and 3 added (CONTEXT_MEMBERS_ADDED[2], [3]).
// Usage: node tests/protocol/build-copies.mjs
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const out = join(repo, "build", "protocol-test");
const common = {
  entryPoints: [join(repo, "js/src/index.ts")],
  bundle: true,
  format: "esm",
  target: "es2022",
  logLevel: "warning",
};

/** Rewrites get-context.ts into a protocol-1.1 copy; fails loudly if the source no longer has what it rewrites. */
const olderCopy = {
  name: "protocol-1.1",
  setup(build) {
    build.onLoad({ filter: /context[\\/]get-context\.ts$/ }, (args) => {
      let src = readFileSync(args.path, "utf8");
      const minor = /(CONTEXT_PROTOCOL: ContextProtocol = Object\.freeze\(\{ major: 1, minor: )3( \}\))/;
      const create = /new PageContext\(CONTEXT_PROTOCOL\)/;
      if (!minor.test(src) || !create.test(src))
        throw new Error("get-context.ts changed: update tests/protocol/build-copies.mjs");
      src = src.replace(minor, "$11$2").replace(create, "withoutMinor2Members(new PageContext(CONTEXT_PROTOCOL))");
      src += `
const ADDED_FOR_OLDER_COPY = CONTEXT_MEMBERS_ADDED;
/** The context as a protocol-1.1 copy makes it: without the members minors 2 and 3 added. */
function withoutMinor2Members(ctx: PageContext): PageContext {
  const hidden = new Set([...ADDED_FOR_OLDER_COPY[2], ...ADDED_FOR_OLDER_COPY[3]]);
  return new Proxy(ctx, {
    get: (t, k) => {
      if (typeof k === "string" && hidden.has(k)) return undefined;
      const v = Reflect.get(t, k, t);
      return typeof v === "function" ? v.bind(t) : v;
    },
    has: (t, k) => (typeof k === "string" && hidden.has(k) ? false : Reflect.has(t, k)),
  });
}
`;
      return { contents: src, loader: "ts" };
    });
  },
};

await esbuild.build({ ...common, outfile: join(out, "current.js") });
await esbuild.build({ ...common, outfile: join(out, "older.js"), plugins: [olderCopy] });
