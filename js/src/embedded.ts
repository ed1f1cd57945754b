/**
 * `webdlpack/embedded`: the Python wheel and the C side module inside the app's JS, for bundlers that leave
 * the package's files behind (esbuild) and apps that would rather not copy them. Opt in once, before
 * loadWebDLPack / loadWebDLPackC:
 *
 *   import { useEmbeddedAssets } from "webdlpack/embedded";
 *   useEmbeddedAssets();
 *
 * Then neither loader makes a request for them. Only an app that imports this entry ships the copies (about
 * 150 kB of base64); every other app ships the files once, as files (js/src/assets.ts, docs/bundlers.md).
 */
import { provideEmbeddedAssets } from "./assets.js";
import { EMBEDDED_ASSETS } from "./assets-embedded.js";

/** Make loadWebDLPack and loadWebDLPackC use the embedded wheel and side module (unless given a URL or assetBase). */
export function useEmbeddedAssets(): void {
  provideEmbeddedAssets(EMBEDDED_ASSETS);
}
