// What the GPU transfer benchmark times: webdlpack's calls and the hand-written WebGPU code a user would write
// instead (the anchors), as variants the suite interleaves (suite.js). Plain ESM: Node (node.mjs) and Chromium
// (transfers.html) load it as is. Each variant's `make(env)` returns {run, check, dispose}: `run` is one timed
// call (it waits for its result), `check` throws unless the bytes moved are right. Nothing is made before the
// first `run` that the user's own first call would have to make (staging buffers, mappings): a variant's first
// call on a fresh device is its cold call.
//   upload:   writeBuffer + wait; a new mappedAtCreation staging buffer per call; one kept staging buffer mapped
//             again after each use (the best hand-written upload); ctx.upload + wait
//   readback: one kept MAP_READ buffer read into a reused array, into wasm memory, or into a fresh array;
//             ctx.readbackInto a reused TypedArray or wasm memory; ctx.readback (a fresh array)
//   anchor:   empty submit + onSubmittedWorkDone (the queue round trip; at small sizes)
import { checkSame } from "./measure.js";

const U = { MAP_READ: 1, MAP_WRITE: 2, COPY_SRC: 4, COPY_DST: 8, STORAGE: 128 };
const READ = 1,
  WRITE = 2;

/** Copy `n` bytes of `src` into `staging`, map it; returns the mapped range (caller unmaps). */
async function copyAndMap(device, src, staging, n) {
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(src, 0, staging, 0, n);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(READ, 0, n);
  return staging.getMappedRange(0, n);
}

/** Copy `n` bytes from `staging` to `dst` and submit. */
function copyOut(device, staging, dst, n) {
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(staging, 0, dst, 0, n);
  device.queue.submit([enc.finish()]);
}

/** The bytes of `buffer` (a check, untimed). */
async function contents(device, buffer, n) {
  const staging = device.createBuffer({ size: n, usage: U.MAP_READ | U.COPY_DST });
  const got = new Uint8Array(await copyAndMap(device, buffer, staging, n)).slice();
  staging.unmap();
  staging.destroy();
  return got;
}

/** An upload variant: `call(env)` makes the timed function; the check reads the destination back. */
function upload(name, group, call) {
  return {
    name,
    group,
    direction: "upload",
    ctx: group === "webdlpack",
    make(env) {
      const state = {};
      return {
        run: () => call(env, state),
        check: async () => checkSame(await contents(env.device, env.dst, env.n), env.host, name),
        dispose: () => state.buffer?.destroy(),
      };
    },
  };
}

/** A readback variant: `call(env, state)` is the timed function; it leaves the bytes in `state.out`. */
function readback(name, group, call, prepare = () => ({})) {
  return {
    name,
    group,
    direction: "readback",
    ctx: group === "webdlpack",
    make(env) {
      const state = prepare(env);
      return {
        run: () => call(env, state),
        check: async () => checkSame(state.view ? state.view() : state.out, env.expected, name),
        dispose: () => state.staging?.destroy(),
      };
    },
  };
}

const done = (env) => env.device.queue.onSubmittedWorkDone();

/** ctx.readbackInto the target `prepare(env)` makes (`state.target`, else the array `state.out`). */
const readbackInto = (name, prepare) =>
  readback(
    name,
    "webdlpack",
    async (env, state) => {
      await env.ctx.readbackInto(env.srcPtr, state.target ?? state.out);
    },
    prepare,
  );

/** A reused target array, touched before the first call (as a user's kept array is). */
const reusedArray = (env) => ({ out: new Uint8Array(env.n).fill(5) });

/** wasm memory holding the target at a 64-byte aligned address, touched. */
function wasmTarget(env) {
  const pages = Math.ceil((env.n + 128) / 65536);
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  new Uint8Array(memory.buffer).fill(3);
  const target = { memory, address: 64, byteLength: env.n };
  return { target, view: () => new Uint8Array(memory.buffer, 64, env.n) };
}

/** The one kept MAP_READ staging buffer of a hand-written readback (made on its first call). */
function readStaging(env, state) {
  state.staging ??= env.device.createBuffer({ size: env.n, usage: U.MAP_READ | U.COPY_DST });
  return state.staging;
}

/** Every variant, in the suite's base order (the suite rotates it). */
export const VARIANTS = [
  upload("writeBuffer + wait (raw)", "anchor", async (env) => {
    env.device.queue.writeBuffer(env.dst, 0, env.host);
    await done(env);
  }),
  upload("staging, a new mapped buffer per call + wait (raw)", "anchor", async (env) => {
    const staging = env.device.createBuffer({ size: env.n, usage: U.COPY_SRC, mappedAtCreation: true });
    new Uint8Array(staging.getMappedRange()).set(env.host);
    staging.unmap();
    copyOut(env.device, staging, env.dst, env.n);
    await done(env);
    staging.destroy();
  }),
  upload("staging, one kept buffer mapped again after use + wait (raw)", "anchor", async (env, state) => {
    state.buffer ??= env.device.createBuffer({ size: env.n, usage: U.MAP_WRITE | U.COPY_SRC, mappedAtCreation: true });
    if (state.buffer.mapState !== "mapped") await state.mapped;
    new Uint8Array(state.buffer.getMappedRange()).set(env.host);
    state.buffer.unmap();
    copyOut(env.device, state.buffer, env.dst, env.n);
    state.mapped = state.buffer.mapAsync(WRITE);
    state.mapped.catch(() => {}); // destroyed while mapping (dispose): nothing waits for it any more
    await done(env);
  }),
  upload("ctx.upload + wait", "webdlpack", async (env) => {
    env.ctx.upload(env.dstPtr, env.host);
    await done(env);
  }),
  readback(
    "readback into a reused array (raw)",
    "anchor",
    async (env, state) => {
      const staging = readStaging(env, state);
      state.out.set(new Uint8Array(await copyAndMap(env.device, env.src, staging, env.n)));
      staging.unmap();
    },
    reusedArray,
  ),
  readback(
    "readback into wasm memory (raw)",
    "anchor",
    async (env, state) => {
      const staging = readStaging(env, state);
      const mapped = new Uint8Array(await copyAndMap(env.device, env.src, staging, env.n));
      const { memory, address } = state.target;
      new Uint8Array(memory.buffer, address, env.n).set(mapped);
      staging.unmap();
    },
    wasmTarget,
  ),
  readback("readback into a fresh array (raw)", "anchor", async (env, state) => {
    const staging = readStaging(env, state);
    const mapped = await copyAndMap(env.device, env.src, staging, env.n);
    state.out = new Uint8Array(env.n);
    state.out.set(new Uint8Array(mapped));
    staging.unmap();
  }),
  readbackInto("ctx.readbackInto reused TypedArray", reusedArray),
  readbackInto("ctx.readbackInto wasm memory", wasmTarget),
  readback("ctx.readback (a fresh array)", "webdlpack", async (env, state) => {
    state.out = new Uint8Array(await env.ctx.readback(env.srcPtr));
  }),
];

/** The queue round trip, timed among the variants at small sizes (the 1 KiB readback's anchor). */
export const EMPTY_SUBMIT = {
  name: "empty submit + onSubmittedWorkDone (raw)",
  group: "anchor",
  direction: "anchor",
  ctx: false,
  make(env) {
    return {
      run: async () => {
        env.device.queue.submit([]);
        await done(env);
      },
      check: async () => {},
      dispose: () => {},
    };
  },
};

/** The variants timed at `n` bytes. */
export function variantsAt(n) {
  return n <= 64 * 1024 ? [...VARIANTS, EMPTY_SUBMIT] : VARIANTS;
}
