/**
 * The GPU adoption fuzzer (runs in a page with `window.webdlpack` and `window.adapters`): random GPUBuffers —
 * the page's own, another GPUDevice's, destroyed before adoption, destroyed by their maker after it — with random
 * usages, sizes and contents, adopted through registerGPUBuffer or tensorFromGPUBuffer (random byte offsets),
 * read at once or after WebGPU has answered, through ctx.readback, ctx.readbackInto, readTensor or
 * copyGPUTensor + readTensor. The contract (issue 21, item 1; docs/spec.md P11):
 * - another device's buffer: BAD_DEVICE, always;
 * - a destroyed buffer: DISPOSED (or INVALID_ARGUMENT where WebGPU refused the use and the probe cannot tell why);
 * - the page's own live buffer: its exact bytes, or a typed refusal of a usage the path needs (INVALID_ARGUMENT,
 *   UNSUPPORTED) — never BAD_DEVICE;
 * never other bytes, never an untyped error. Short mode: tests/browser/gpu-adoption-fuzz.spec.ts; long mode:
 * `make fuzz` (scripts/fuzz.mjs, job "gpu").
 */

const { STORAGE, COPY_SRC, COPY_DST, MAP_READ } = GPUBufferUsage;
const USAGES = [
  STORAGE | COPY_SRC | COPY_DST,
  STORAGE | COPY_SRC,
  COPY_SRC | COPY_DST,
  COPY_SRC,
  STORAGE | COPY_DST,
  STORAGE,
  MAP_READ | COPY_DST,
];
const MAKERS = ["own", "own", "foreign", "foreign", "destroyed-before", "destroyed-after"];
const READS = ["readback", "readbackInto", "readTensor", "copyThenRead"];

/** Run until `cases` cases (0: no limit) or `seconds` (0: no limit); resolves to the stats. */
export async function fuzzAdoption({ seed, cases = 0, seconds = 0 }) {
  const { webdlpack, adapters } = window;
  const ctx = webdlpack.getContext();
  await ctx.setup();
  const device = ctx.getWebGPUDevice(0);
  const other = await (await navigator.gpu.requestAdapter()).requestDevice({ label: "fuzz: another device" });
  const baseline = ctx.stats().livePointers;
  let state = seed >>> 0 || 1;
  const rand = () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const stats = { cases: 0, accepted: 0, refused: 0, wrong: 0, failures: [] };
  const deadline = seconds > 0 ? performance.now() + seconds * 1000 : Number.POSITIVE_INFINITY;
  while ((cases === 0 || stats.cases < cases) && performance.now() < deadline) {
    const c = {
      maker: pick(MAKERS),
      usage: pick(USAGES),
      words: 1 + Math.floor(rand() * 64),
      adopt: pick(["register", "fromGPUBuffer"]),
      settle: rand() < 0.5,
      read: pick(READS),
    };
    const offsetWords = c.adopt === "fromGPUBuffer" ? Math.floor(rand() * c.words) : 0;
    const count = c.words - offsetWords;
    const values = Uint32Array.from({ length: c.words }, () => Math.floor(rand() * 2 ** 32));
    const outcome = await runCase(
      ctx,
      adapters,
      webdlpack,
      c.maker === "foreign" ? other : device,
      c,
      values,
      offsetWords,
      count,
    );
    stats.cases += 1;
    const verdict = judge(c, outcome, values.subarray(offsetWords));
    if (verdict === "accepted") stats.accepted += 1;
    else if (verdict === "refused") stats.refused += 1;
    else {
      stats.wrong += 1;
      if (stats.failures.length < 10) stats.failures.push(`${JSON.stringify(c)}: ${verdict}`);
    }
  }
  other.destroy();
  const left = ctx.stats().livePointers - baseline;
  if (left !== 0) {
    stats.wrong += 1;
    stats.failures.push(`${left} GPU pointers left alive`);
  }
  return stats;
}

/** One case: make, adopt, read; resolves to {bytes} or {error: {name, code, field}}. */
async function runCase(ctx, adapters, webdlpack, maker, c, values, offsetWords, count) {
  const buffer = maker.createBuffer({ size: c.words * 4, usage: c.usage, mappedAtCreation: true });
  new Uint32Array(buffer.getMappedRange()).set(values);
  buffer.unmap();
  if (c.maker === "destroyed-before") buffer.destroy();
  let tensor;
  try {
    if (c.adopt === "register") {
      const p = ctx.registerGPUBuffer(buffer);
      tensor = webdlpack.Tensor.webgpu({
        pointer: p,
        deviceId: 0,
        dtype: "uint32",
        shape: [count],
        onRelease: () => ctx.freeWebGPU(p),
      });
    } else {
      tensor = adapters.tensorFromGPUBuffer(buffer, { dtype: "uint32", shape: [count], byteOffset: offsetWords * 4 });
    }
    if (c.settle) {
      await ctx.getWebGPUDevice(0).queue.onSubmittedWorkDone();
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    if (c.maker === "destroyed-after") buffer.destroy();
    return { bytes: await read(ctx, adapters, tensor, c.read, count) };
  } catch (err) {
    return {
      error: { name: err?.constructor?.name, code: err?.code, field: err?.field, message: String(err?.message) },
    };
  } finally {
    tensor?.dispose();
    buffer.destroy();
  }
}

async function read(ctx, adapters, tensor, how, count) {
  switch (how) {
    case "readback":
      return new Uint32Array(await ctx.readback(tensor.data, { byteOffset: tensor.byteOffset, byteLength: count * 4 }));
    case "readbackInto": {
      const out = new Uint32Array(count);
      await ctx.readbackInto(tensor.data, out, { byteOffset: tensor.byteOffset });
      return out;
    }
    case "readTensor":
      return adapters.readTensor(tensor);
    default: {
      const copy = await adapters.copyGPUTensor(tensor);
      try {
        return await adapters.readTensor(copy);
      } finally {
        copy.dispose();
      }
    }
  }
}

/** "accepted", "refused", or what broke the contract. */
function judge(c, outcome, expected) {
  if (outcome.bytes !== undefined) {
    if (c.maker !== "own") return `returned bytes for a ${c.maker} buffer`;
    const got = Array.from(outcome.bytes);
    return got.length === expected.length && got.every((v, i) => v === expected[i])
      ? "accepted"
      : `wrong bytes: ${got.slice(0, 4)}… for ${Array.from(expected.slice(0, 4))}…`;
  }
  const e = outcome.error;
  if (e.name !== "WebDLPackError") return `untyped ${e.name}: ${e.message}`;
  // The page's own live buffer is read whenever it has the usage the path needs.
  const needs = c.read.startsWith("readback") ? COPY_SRC : COPY_SRC | STORAGE;
  if (c.maker === "own" && (c.usage & needs) !== 0) return `refused a readable own buffer: ${e.code} ${e.message}`;
  const allowed =
    c.maker === "foreign"
      ? ["BAD_DEVICE"]
      : c.maker === "own"
        ? ["INVALID_ARGUMENT", "UNSUPPORTED"]
        : ["DISPOSED", "INVALID_ARGUMENT", "UNSUPPORTED"]; // destroyed: or a usage the path needs, refused first
  return allowed.includes(e.code) ? "refused" : `${e.code} (${e.field}) for a ${c.maker} buffer: ${e.message}`;
}
