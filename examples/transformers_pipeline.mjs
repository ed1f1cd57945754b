// Transformers.js on webdlpack's WebGPU device, pipelines written as Transformers.js users write them:
// pooling, normalize and tolist() work unchanged. Outputs that stay on the GPU are an explicit opt-in
// (ORT's own preferredOutputLocation), for handing them to TF.js with no read back.
import { env, pipeline } from "@huggingface/transformers";
import { getContext } from "webdlpack";
import {
  registerTfjsWebGPUBackend,
  tensorFromTransformers,
  tensorToTfjs,
  transformersOptions,
} from "webdlpack/adapters";

/** A sentence embedding two ways: Transformers.js's own pooling, and mean + normalize in TF.js on the GPU. */
export async function run({ tf, WebGPUBackend, model, text, localModelPath, wasmPaths }) {
  env.allowRemoteModels = false; // offline: local model folders only...
  env.allowLocalModels = true; // ...which must be allowed: <localModelPath>/<model>/{config.json, tokenizer.json, ...}
  env.localModelPath = localModelPath;
  env.backends.onnx.wasm.wasmPaths = wasmPaths; // its onnxruntime-web's dist/ (the default is a CDN)
  const ctx = getContext();
  await ctx.setup(); // the page's one GPUDevice
  const extractor = await pipeline("feature-extraction", model, transformersOptions(ctx, {}, { env })); // env: its version is checked
  const pooled = await extractor(text, { pooling: "mean", normalize: true });
  const embedding = pooled.tolist()[0]; // number[]

  const gpuOptions = transformersOptions(ctx, { session_options: { preferredOutputLocation: "gpu-buffer" } }, { env });
  const onGpu = await pipeline("feature-extraction", model, gpuOptions);
  const features = await onGpu(text, { pooling: "none" }); // [1, tokens, hidden] on the GPU (pool it yourself)
  await registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx); // TF.js on the same device
  const t = tensorFromTransformers(features); // the same GPUBuffer
  const x = await tensorToTfjs(tf, t); // still the same GPUBuffer
  const unit = tf.tidy(() => {
    const mean = tf.mean(x, 1); // over the tokens
    return tf.div(mean, tf.norm(mean, 2, -1, true));
  });
  const fromTfjs = Array.from(await unit.data()); // the one read back of this path
  for (const done of [unit, x, t]) done.dispose(); // features goes back to ORT once t and x let go
  await onGpu.dispose();
  await extractor.dispose();
  return { embedding, fromTfjs };
}
