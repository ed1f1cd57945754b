// Benchmark (not a test): GPU hand-offs between TVM's web runtime (tvmjs) and ONNX Runtime Web through
// webdlpack (the consumer gets the same GPUBuffer, no GPU work) vs reading the output back to the CPU and
// uploading it again (what pages do without a shared device), at 1 KiB and 16 MiB, in one run:
//   tvmjs → ORT-web   a tvmjs VM output (the test models' `relu`) becomes an ORT input tensor:
//                     tensorFromTvm + tensorToOrt  vs
//                     tvmjs's read back (CPU tensor copyFrom + sync + toArray) + createBuffer/writeBuffer +
//                     ort.Tensor.fromGpuBuffer
//   ORT-web → tvmjs   an ORT output (relu_dynamic.onnx) becomes a tvmjs tensor:
//                     tensorFromOrt + tensorToTvm  vs  Y.getData() + tvm.empty(webgpu).copyFrom(data)
// Models: build/tvm/models/test_models.wasm (scripts/tvm/build.sh), tests/data/relu_dynamic.onnx. Each sample
// times a batch of hand-offs of fresh outputs; the first sample of each case is a warm-up and dropped.
// Writes bench/out/tvm-handoff.json. Usage: node bench/tvm-handoff.mjs   (after `make js tvm`)
import { measureSizes, printHandoffs } from "./gpu-handoff.mjs";
import { withBenchPage, writeOut } from "./lib.mjs";

/** Runs in the page (tests/browser/frameworks.html): per-hand-off milliseconds of each sample. */
async function measureInPage({ nbytes, runs, batch }) {
  const { webdlpack, adapters, ort, loadTvmModels, createTvmVm } = window;
  const ctx = webdlpack.getContext();
  await ctx.setup();
  const device = ctx.getWebGPUDevice(0);
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  if (window.benchTvm === undefined) {
    window.benchReadBytes = 0; // GPU → CPU bytes (mapAsync for reading): what each way reads back
    const mapAsync = GPUBuffer.prototype.mapAsync;
    GPUBuffer.prototype.mapAsync = function (mode, offset, size) {
      if ((mode & GPUMapMode.READ) !== 0) window.benchReadBytes += size ?? this.size - (offset ?? 0);
      return mapAsync.call(this, mode, offset, size);
    };
    const ortBinding = adapters.bindOrtToContext(ort, ctx);
    const model = new Uint8Array(await (await fetch("/tests/data/relu_dynamic.onnx")).arrayBuffer());
    const session = await ort.InferenceSession.create(model, ortBinding.sessionOptions());
    const tvm = await loadTvmModels();
    const tvmBinding = adapters.bindTvmToContext(tvm, ctx);
    window.benchTvm = { ortBinding, session, tvm, tvmBinding, vm: createTvmVm(tvm) };
  }
  const { ortBinding, session, tvm, tvmBinding, vm } = window.benchTvm;
  const gpu = tvm.lib.webGPUContext;
  const n = nbytes / 4;
  const detached = (make) => tvm.withNewScope(() => tvm.detachFromCurrentScope(make()));
  const samples = { tvmOrtHandoff: [], tvmOrtReadback: [], ortTvmHandoff: [], ortTvmReadback: [] };
  const checks = {};
  const record = (r, name, handoff, readback) => {
    if (r === 0) return; // warm-up
    samples[`${name}Handoff`].push(handoff);
    samples[`${name}Readback`].push(readback);
  };
  const values = Float32Array.from({ length: n }, (_, i) => (i % 7) - 3);
  const tvmIn = detached(() => tvm.empty([n], "float32", tvm.webgpu()));
  tvmIn.copyFrom(values);
  const relu = detached(() => vm.getFunction("relu"));
  const tvmRelu = () => detached(() => relu(tvmIn));

  // tvmjs → ORT-web
  for (let r = 0; r <= runs; r++) {
    const outputs = Array.from({ length: batch }, tvmRelu);
    gpu.flushCommands();
    await device.queue.onSubmittedWorkDone();
    let read0 = window.benchReadBytes;
    let t0 = performance.now();
    const made = [];
    for (const out of outputs) {
      const t = tvmBinding.tensorFromTvm(out);
      made.push(await ortBinding.tensorToOrt(t));
      t.dispose();
    }
    const handoff = (performance.now() - t0) / batch;
    if (r === 0) {
      checks.tvmOrtHandoffBytesRead = window.benchReadBytes - read0;
      checks.tvmOrtZeroCopy = adapters.handoffInfo(made[0])?.zeroCopy === true;
      checks.tvmOrtSameBuffer = made[0].gpuBuffer === gpu.gpuBufferFromPtr(outputs[0].getDataPtr());
    }
    for (const o of made) o.dispose(); // the last holder: tvmjs gets its output back
    checks.tvmOutputsReleased = outputs.every((o) => o.handle === 0);

    const out = tvmRelu();
    gpu.flushCommands();
    await device.queue.onSubmittedWorkDone();
    read0 = window.benchReadBytes;
    t0 = performance.now();
    const cpu = detached(() => tvm.empty([n], "float32", tvm.cpu()));
    cpu.copyFrom(out);
    await gpu.sync();
    const data = cpu.toArray();
    const copy = device.createBuffer({ size: nbytes, usage });
    device.queue.writeBuffer(copy, 0, data);
    const oc = ort.Tensor.fromGpuBuffer(copy, { dataType: "float32", dims: [n] });
    const readback = performance.now() - t0;
    checks.tvmOrtReadbackBytesRead = window.benchReadBytes - read0;
    checks.tvmValuesRight = data[3] === 0 && data[4] === 1;
    oc.dispose();
    copy.destroy();
    cpu.dispose();
    out.dispose();
    record(r, "tvmOrt", handoff, readback);
  }
  tvmIn.dispose();

  // ORT-web → tvmjs
  const xBuffer = device.createBuffer({ size: nbytes, usage });
  device.queue.writeBuffer(xBuffer, 0, values);
  const X = ort.Tensor.fromGpuBuffer(xBuffer, { dataType: "float32", dims: [n] });
  for (let r = 0; r <= runs; r++) {
    const outputs = [];
    for (let b = 0; b < batch; b++) outputs.push((await session.run({ X })).Y);
    await device.queue.onSubmittedWorkDone();
    let read0 = window.benchReadBytes;
    let t0 = performance.now();
    const made = [];
    for (const Y of outputs) {
      const t = ortBinding.tensorFromOrt(Y);
      made.push(await tvmBinding.tensorToTvm(t));
      t.dispose();
    }
    const handoff = (performance.now() - t0) / batch;
    if (r === 0) {
      checks.ortTvmHandoffBytesRead = window.benchReadBytes - read0;
      checks.ortTvmZeroCopy = adapters.handoffInfo(made[0])?.zeroCopy === true;
      checks.ortTvmSameBuffer = gpu.gpuBufferFromPtr(made[0].getDataPtr()) === outputs[0].gpuBuffer;
    }
    for (const t of made) t.dispose(); // tvmjs frees the slot: ORT gets its output back
    checks.ortOutputsReleased = outputs.every((Y) => Y.location === "none");
    checks.lentAfter = tvmBinding.lentBuffers();

    const { Y } = await session.run({ X });
    await device.queue.onSubmittedWorkDone();
    read0 = window.benchReadBytes;
    t0 = performance.now();
    const data = await Y.getData(true); // read back (and release ORT's buffer)
    const tt = detached(() => tvm.empty([n], "float32", tvm.webgpu()));
    tt.copyFrom(data);
    const readback = performance.now() - t0;
    checks.ortTvmReadbackBytesRead = window.benchReadBytes - read0;
    tt.dispose();
    record(r, "ortTvm", handoff, readback);
  }
  X.dispose();
  xBuffer.destroy();
  relu.dispose();
  return { samples, checks, batch };
}

/** Run the tvmjs hand-off benchmark; returns `{chromium, sizes: {nbytes: {tvmToOrt, ortToTvm, checks}}}` (ms). */
export async function tvmHandoff({ runs = 9 } = {}) {
  return withBenchPage("/tests/browser/frameworks.html", "frameworksReady", async (page, chromium) => {
    const sizes = await measureSizes(page, measureInPage, runs, [
      ["tvmToOrt", "tvmOrt", (b) => b],
      ["ortToTvm", "ortTvm", (b) => b],
    ]);
    return { chromium, sizes };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await tvmHandoff();
  writeOut("tvm-handoff", result);
  printHandoffs(result, ["tvmToOrt", "ortToTvm"]);
}
