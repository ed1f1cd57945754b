// The same app with the package's files inside its JS (docs/bundlers.md, "esbuild, files embedded"):
// useEmbeddedAssets() once, before the loaders; nothing is fetched for them.
import { useEmbeddedAssets } from "webdlpack/embedded";
import { run } from "./main.js";

useEmbeddedAssets();
globalThis.runBundledApp = run;
