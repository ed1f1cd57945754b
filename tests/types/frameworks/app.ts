/**
 * A user's app against the frameworks' OWN type packages (pyodide, onnxruntime-web, @tensorflow/tfjs-core +
 * tfjs-backend-webgpu, @huggingface/transformers, @litertjs/core, @mlc-ai/web-runtime) and webdlpack's published declarations,
 * compiled with `tsc --strict`: every documented adapter function is called, and there is not one cast
 * (tests/js/framework-types.test.ts compiles it and checks that no `as` appears). Never run.
 */
import { env, pipeline, type Tensor as HFTensor } from "@huggingface/transformers";
import * as litert from "@litertjs/core";
import * as tvmjs from "@mlc-ai/web-runtime";
import { WebGPUBackend } from "@tensorflow/tfjs-backend-webgpu";
import * as tf from "@tensorflow/tfjs-core";
import * as ort from "onnxruntime-web/webgpu";
import { loadPyodide } from "pyodide";
import { getContext, loadWebDLPack, loadWebDLPackC, type Tensor } from "webdlpack";
import {
  bindLiteRtToContext,
  bindOrtToContext,
  bindTvmToContext,
  checkLiteRtEnvironment,
  checkOrtDevice,
  copyGPUTensor,
  dtypeOfOrt,
  dtypeOfTfjs,
  handoffInfo,
  liveProducedTensors,
  locateGPUTensor,
  ortSessionOptions,
  ortTypeOf,
  readTensor,
  registerTfjsWebGPUBackend,
  runGpuCopy,
  tensorFromGPUBuffer,
  tensorFromLiteRt,
  tensorFromOrt,
  tensorFromTfjs,
  tensorFromTransformers,
  tensorFromTvm,
  tensorToGPUBuffer,
  tensorToLiteRt,
  tensorToOrt,
  tensorToTfjs,
  tensorToTvm,
  tensorToTypedArray,
  tfjsHeldBuffers,
  tfjsTypeOf,
  transformersOptions,
  tvmCopyStats,
} from "webdlpack/adapters";

/** Python in Pyodide and C, on the context's device. */
export async function python(): Promise<number[]> {
  const ctx = getContext();
  await ctx.setup();
  const pyodide = await loadPyodide({ indexURL: "/node_modules/pyodide/" });
  const py = await loadWebDLPack(pyodide);
  const clib = await loadWebDLPackC(pyodide);
  const t: Tensor = py.fromPython(pyodide.runPython("import webdlpack; webdlpack.zeros((4,), 'float32')"));
  const values = Array.from(await readTensor(t), Number);
  t.dispose();
  clib.dispose();
  return values;
}

/** ORT → TF.js → ORT, on one device. */
export async function ortAndTfjs(model: Uint8Array): Promise<number[]> {
  const ctx = getContext();
  await ctx.setup();
  const device: GPUDevice = checkOrtDevice(ort, ctx);
  const bound = bindOrtToContext(ort, ctx);
  const session = await ort.InferenceSession.create(model, bound.sessionOptions());
  const alone = await ort.InferenceSession.create(model, ortSessionOptions(ctx, { graphOptimizationLevel: "all" }));
  const backend = await registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
  const input = new ort.Tensor("float32", new Float32Array(8), [2, 4]);
  const { Y } = await session.run({ X: input });
  const y = tensorFromOrt(Y);
  const tfY = await tensorToTfjs(tf, y); // a tf.Tensor: TF.js's own ops take it
  const z = tf.matMul(tfY, tf.transpose(tfY));
  const back = await tensorFromTfjs(tf, tf.sigmoid(z));
  const ortBack: ort.Tensor = await tensorToOrt(ort, back);
  const again = bound.tensorFromOrt((await alone.run({ X: ortBack })).Y);
  const feed: ort.Tensor = await bound.tensorToOrt(again);
  feed.dispose();
  const copy = await copyGPUTensor(again, { ctx });
  const where = locateGPUTensor(copy, ctx);
  const out = tensorToGPUBuffer(copy, ctx);
  const other = tensorFromGPUBuffer(out.buffer, { dtype: "float32", shape: [2, 2], ctx });
  const scratch = device.createBuffer({ size: 64, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  runGpuCopy(
    where.device,
    "copy",
    { buffer: where.buffer, shape: [2, 2], strides: null, byteOffset: 0, itemsize: 4 },
    scratch,
  );
  const cpu = await readTensor(other);
  const typed = tensorToTypedArray(y, { copy: "always" });
  const names = [
    ortTypeOf(y.dtype),
    dtypeOfOrt("float32").bits,
    tfjsTypeOf(y.dtype).tfjs,
    dtypeOfTfjs("int32").dtype.bits,
  ];
  const copied = handoffInfo(tfY)?.isCopied ?? false;
  for (const done of [other, copy, again, back, y]) done.dispose();
  tf.dispose([z, tfY]);
  const held = tfjsHeldBuffers(backend) + liveProducedTensors();
  return [...Array.from(cpu, Number), ...Array.from(typed, Number), names.length, copied ? 1 : 0, held];
}

/** A Transformers.js pipeline on the shared device, its output into TF.js. */
export async function transformers(text: string): Promise<number[][]> {
  const ctx = getContext();
  await ctx.setup();
  env.allowLocalModels = true;
  const extractor = await pipeline("feature-extraction", "tiny-bert", transformersOptions(ctx));
  const pooled = await extractor(text, { pooling: "mean", normalize: true });
  const rows: number[][] = pooled.tolist();
  const raw: HFTensor = await extractor(text, { pooling: "none" });
  const t = tensorFromTransformers(raw);
  const tft = await tensorToTfjs(tf, t);
  tft.dispose();
  t.dispose();
  return rows;
}

/** LiteRT.js on the shared device, both ways. */
export async function liteRt(model: Uint8Array): Promise<number> {
  const ctx = getContext();
  await ctx.setup();
  await litert.loadLiteRt("/node_modules/@litertjs/core/wasm/");
  const binding = await bindLiteRtToContext(litert, ctx);
  checkLiteRtEnvironment(binding.environment, ctx);
  const compiled = await litert.loadAndCompile(model, { accelerator: "webgpu", environment: binding.environment });
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const buffer = ctx.getWebGPUDevice(0).createBuffer({ size: 64, usage });
  const input = tensorFromGPUBuffer(buffer, { dtype: "float32", shape: [16], owned: true });
  const inLiteRt: litert.Tensor = await tensorToLiteRt(litert, input);
  const [output] = await compiled.run([inLiteRt]);
  const y = tensorFromLiteRt(output);
  const [again] = await compiled.run([await binding.tensorToLiteRt(y)]);
  const z = binding.tensorFromLiteRt(again);
  const n = z.shape[0];
  for (const done of [z, y, input]) done.dispose();
  return n;
}

/** tvmjs (TVM's web runtime) on the shared device, both ways. */
export async function tvm(modelLibrary: ArrayBuffer): Promise<number> {
  const ctx = getContext();
  await ctx.setup();
  const instance: tvmjs.Instance = await tvmjs.instantiate(modelLibrary, tvmjs.createPolyfillWASI());
  const binding = bindTvmToContext(instance, ctx);
  const vm = instance.withNewScope(() =>
    instance.detachFromCurrentScope(instance.createVirtualMachine(instance.webgpu())),
  );
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const buffer = ctx.getWebGPUDevice(0).createBuffer({ size: 128, usage });
  const input = tensorFromGPUBuffer(buffer, { dtype: "float32", shape: [4, 8], owned: true });
  const tx: tvmjs.Tensor = await binding.tensorToTvm(input);
  const again: tvmjs.Tensor = await tensorToTvm(instance, input, { ctx });
  instance.beginScope();
  const out: tvmjs.Tensor = vm.getFunction("mlp")(tx);
  const y = binding.tensorFromTvm(out);
  const z = tensorFromTvm(out, { ctx });
  instance.endScope();
  const n = y.shape[0] + tvmCopyStats().count;
  for (const done of [z, y, input]) done.dispose();
  tx.dispose();
  again.dispose();
  vm.dispose();
  return n;
}
