// ONNX Runtime Web and TensorFlow.js on webdlpack's one WebGPU device: ORT's output becomes
// a TF.js tensor over the same GPUBuffer, no readback in between. The caller imports the
// frameworks (import * as ort from "onnxruntime-web/webgpu", tf from "@tensorflow/tfjs-core",
// { WebGPUBackend } from "@tensorflow/tfjs-backend-webgpu") and passes them in.
import { getContext } from "webdlpack";
import { bindOrtToContext, registerTfjsWebGPUBackend, tensorToTfjs } from "webdlpack/adapters";

/** sigmoid(model(input)): the model (input "X", output "Y") in ORT, sigmoid in TF.js; returns a Float32Array. */
export async function run({ ort, tf, WebGPUBackend, modelBytes, input, dims }) {
  const ctx = getContext();
  await ctx.setup(); // the page's one GPUDevice
  const ortOnCtx = bindOrtToContext(ort, ctx);
  const session = await ort.InferenceSession.create(modelBytes, ortOnCtx.sessionOptions());
  await registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx); // TF.js on the same device
  const x = new ort.Tensor("float32", input, dims);
  const { Y } = await session.run({ X: x }); // Y stays on the GPU ("gpu-buffer")
  const t = ortOnCtx.tensorFromOrt(Y); // DLPack tensor on webgpu:0, same GPUBuffer
  const tft = await tensorToTfjs(tf, t); // TF.js tensor over that buffer: no copy
  const z = tf.sigmoid(tft);
  const values = await z.data(); // the one GPU → CPU copy
  for (const done of [z, tft, t, x]) done.dispose(); // Y goes back to ORT once t and tft let go
  await session.release();
  return values;
}
