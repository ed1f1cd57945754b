// The demo inside a dedicated module Worker (index.html?worker=1): the same loading stages and exchange steps as
// on the page — webdlpack's context and device, Pyodide, ORT-web and TF.js all live here, in one realm, because
// WebGPU objects can not cross threads (docs/pyodide-in-a-worker.md). The page only draws what this posts:
//   page → worker  {type: "load" | "run" | "panel" | "leak", id}
//   worker → page  {type: "reply", id, value} | {type: "error", id, error}, and while loading and running
//                  {type: "stage", name, state, text} and {type: "steps", steps}
import { loadEverything } from "./load.js";
import { runExchange } from "./exchange.js";
import { leakOne, panelSnapshot } from "./panel.js";

const here = (path) => new URL(path, import.meta.url).href;

/** A Worker has no import map: ORT's WebGPU build by its file, TF.js as the bundle `make build` makes. */
async function importFrameworks() {
  const [ort, { tf, WebGPUBackend }] = await Promise.all([
    import(here("../node_modules/onnxruntime-web/dist/ort.webgpu.min.mjs")),
    import(here("../build/web/tfjs-webgpu.js")),
  ]);
  return { ort, tf, WebGPUBackend };
}

let env = null;
const post = (message) => self.postMessage(message);

/** Each request's answer (posted as its reply). */
const handlers = {
  async load() {
    env = await loadEverything({
      onStage: (name, state, text) => post({ type: "stage", name, state, text }),
      importFrameworks,
    });
    return { deviceInfo: env.deviceInfo, load: env.load };
  },
  async run() {
    const result = await runExchange(env, (steps) => post({ type: "steps", steps }));
    return { ...result, panel: panelSnapshot(env.ctx) };
  },
  panel: () => panelSnapshot(env.ctx),
  leak: () => leakOne(env.ctx),
};

self.onmessage = async ({ data: { type, id } }) => {
  try {
    post({ type: "reply", id, value: await handlers[type]() });
  } catch (err) {
    post({
      type: "error",
      id,
      error: { code: err?.code ?? null, message: String(err?.message ?? err), advice: err?.advice ?? null },
    });
  }
};
