/**
 * CPU tensors between threads (the page and its Workers, or two Workers).
 *
 * WebGPU objects can not cross threads (posting a GPUDevice or GPUBuffer is a
 * DataCloneError), so GPU tensors stay in the realm that made them — see
 * docs/pyodide-in-a-worker.md. CPU tensors can move, by one of three paths,
 * and every call says which one it took:
 *
 * - `"transfer"`: a tensor over its own ArrayBuffer (its bytes are the whole
 *   buffer) — the buffer is transferred, a zero-copy move of ownership. The
 *   sender's buffer is detached at once.
 * - `"shared"`: a tensor whose memory is a SharedArrayBuffer (a shared wasm
 *   memory, on a cross-origin isolated page) — no copy at all: the receiver
 *   views the same memory.
 * - `"copy"`: anything else on the CPU (a wasm heap such as Pyodide's, whose
 *   buffer can not be transferred; a tensor over part of a buffer; a strided
 *   tensor; `{copy: true}`) — one copy into a fresh buffer, which is transferred.
 *
 * Deleter semantics: sending consumes the sender's tensor (any use is then a
 * `DISPOSED` error). The sender's release (its producer's deleter, or
 * `onRelease`) runs exactly once, on the sender's thread: for `"copy"` at once
 * (the receiver has its own bytes), for `"transfer"` and `"shared"` when the
 * receiver's tensor is disposed or garbage-collected — the receiver says so
 * through a MessagePort that travels in the message. The receiver's tensor
 * is an ordinary `"js"` tensor.
 */
import { describeValue } from "../describe-value.js";
import { formatDType, parseDType } from "../dlpack/index.js";
import { WebDLPackError } from "../errors.js";
import { Tensor } from "../tensor/index.js";

/** How a tensor crossed: see the module comment. */
export type ThreadMovePath = "transfer" | "copy" | "shared";

/** Marks a {@link ThreadTensorMessage} (and its format version). */
export const THREAD_TENSOR_TAG = "webdlpack.thread-tensor/1";

/** What travels in the message (structured-cloneable); make it with {@link packTensorForThread}. */
export interface ThreadTensorMessage {
  readonly tag: typeof THREAD_TENSOR_TAG;
  readonly path: ThreadMovePath;
  /** The bytes: a transferred ArrayBuffer, a fresh copy, or the sender's SharedArrayBuffer. */
  readonly buffer: ArrayBuffer | SharedArrayBuffer;
  /** Where the tensor's first byte is in `buffer`. */
  readonly byteOffset: number;
  readonly nbytes: number;
  /** dtype name, e.g. "float32". */
  readonly dtype: string;
  readonly shape: readonly number[];
  readonly readOnly: boolean;
  /** Receives one message when the receiver releases the tensor (null for "copy"). */
  readonly release: MessagePort | null;
}

/** What {@link packTensorForThread} returns: post `message` with `transfer` as the transfer list. */
export interface PackedThreadTensor {
  readonly message: ThreadTensorMessage;
  /** Pass as postMessage's transfer list (the buffer unless shared, and the release port). */
  readonly transfer: Transferable[];
  readonly path: ThreadMovePath;
  /** Bytes copied on the sender (0 for "transfer" and "shared", the tensor's bytes for "copy"). */
  readonly bytesCopied: number;
  /** Why this path was taken, in words. */
  readonly reason: string;
}

/** Options of {@link packTensorForThread}. */
export interface PackForThreadOptions {
  /** true: always take the "copy" path (the sender's buffer stays attached). Default false. */
  copy?: boolean;
}

let pendingReleases = 0;

/**
 * Tensors this thread sent by "transfer" or "shared" whose receiver has not
 * released them yet (their sender-side release is still waiting).
 */
export function pendingThreadReleases(): number {
  return pendingReleases;
}

/** Whether this realm may post a SharedArrayBuffer (cross-origin isolated browsers; Node). */
function canShareMemory(): boolean {
  return (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated !== false;
}

/** Move `buffer`'s bytes into a new ArrayBuffer without copying; the old one is detached. Throws if it can not be detached. */
function detach(buffer: ArrayBuffer): ArrayBuffer {
  const transfer = (buffer as ArrayBuffer & { transfer?: () => ArrayBuffer }).transfer;
  if (typeof transfer === "function") return transfer.call(buffer);
  return structuredClone(buffer, { transfer: [buffer] });
}

interface Plan {
  path: ThreadMovePath;
  reason: string;
  buffer: ArrayBuffer | SharedArrayBuffer;
  byteOffset: number;
}

/** Choose the path for `tensor` (a live CPU tensor). Detaches nothing yet. */
function plan(tensor: Tensor, copy: boolean): Plan {
  const copyPlan = (reason: string): Plan => ({ path: "copy", reason, buffer: new ArrayBuffer(0), byteOffset: 0 });
  if (copy) return copyPlan("copy: true was asked");
  if (!tensor.isContiguous) return copyPlan("the tensor is strided: its elements are gathered into a contiguous copy");
  const memory = bufferOf(tensor);
  if (memory === null) return copyPlan("the first element is not aligned for a view: its bytes are copied");
  const first = tensor.data + tensor.byteOffset;
  const shared = typeof SharedArrayBuffer === "function" && memory instanceof SharedArrayBuffer;
  if (shared) {
    if (!canShareMemory()) return copyPlan("the memory is shared, but this realm is not cross-origin isolated");
    return {
      path: "shared",
      reason: "the memory is a SharedArrayBuffer: the receiver views the same bytes",
      buffer: memory,
      byteOffset: first,
    };
  }
  if (tensor.storage === "wasm") return copyPlan("the bytes are in a wasm heap, whose buffer can not be transferred");
  if (first !== 0 || tensor.nbytes !== memory.byteLength) {
    return copyPlan(
      `the tensor covers ${tensor.nbytes} of its ArrayBuffer's ${memory.byteLength} bytes; transferring would take the rest`,
    );
  }
  return {
    path: "transfer",
    reason: "the tensor's bytes are its whole ArrayBuffer: it is transferred",
    buffer: memory,
    byteOffset: 0,
  };
}

/** The memory a contiguous CPU tensor's bytes are in, or null when no view can be made (misaligned). */
function bufferOf(tensor: Tensor): ArrayBufferLike | null {
  if (tensor.storage === "wasm") return tensor.host!.buffer;
  try {
    return tensor.view.buffer;
  } catch {
    return null;
  }
}

/** The contiguous bytes of `tensor` in a fresh ArrayBuffer (one copy). */
function copyBytes(tensor: Tensor): ArrayBuffer {
  const array = tensor.toArray();
  if (array.byteOffset === 0 && array.byteLength === array.buffer.byteLength) return array.buffer as ArrayBuffer;
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength).slice().buffer;
}

/**
 * Make `tensor` (a CPU tensor) ready to post to another thread, and consume it:
 * afterwards it is disposed here. Post `message` with `transfer` as the transfer
 * list; the receiver calls {@link tensorFromThread}. See the module comment for
 * the paths and when the sender's release runs.
 * Throws UNSUPPORTED for a WebGPU tensor (GPU objects can not cross threads),
 * DISPOSED for a disposed one; on a throw the tensor is left as it was.
 */
export function packTensorForThread(tensor: Tensor, options: PackForThreadOptions = {}): PackedThreadTensor {
  if (!(tensor instanceof Tensor)) {
    throw new WebDLPackError("INVALID_ARGUMENT", "packTensorForThread takes a webdlpack Tensor", {
      field: "tensor",
      value: describeValue(tensor),
      expected: "a Tensor",
    });
  }
  if (options === null || typeof options !== "object") {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad packTensorForThread options", {
      field: "options",
      value: describeValue(options),
      expected: "an object {copy?}",
    });
  }
  if (tensor.storage === "webgpu") {
    throw new WebDLPackError(
      "UNSUPPORTED",
      "a WebGPU tensor can not move to another thread: WebGPU objects can not cross threads",
      {
        field: "tensor.storage",
        value: "webgpu",
        expected: "a CPU tensor; keep GPU work in one realm, or read the bytes back (ctx.readback) and send those",
      },
    );
  }
  const chosen = plan(tensor, options.copy === true);
  let buffer = chosen.buffer;
  let bytesCopied = 0;
  let path = chosen.path;
  let reason = chosen.reason;
  if (path === "transfer") {
    try {
      buffer = detach(buffer as ArrayBuffer);
    } catch {
      path = "copy";
      reason = "the ArrayBuffer can not be detached (a wasm memory's buffer): one copy";
    }
  }
  if (path === "copy") {
    buffer = copyBytes(tensor);
    bytesCopied = buffer.byteLength;
  }
  const byteOffset = path === "copy" ? 0 : chosen.byteOffset;
  const channel = path === "copy" ? null : new MessageChannel();
  const message: ThreadTensorMessage = {
    tag: THREAD_TENSOR_TAG,
    path,
    buffer,
    byteOffset,
    nbytes: tensor.nbytes,
    dtype: formatDType(tensor.dtype),
    shape: [...tensor.shape],
    readOnly: tensor.flags.readOnly,
    release: channel?.port2 ?? null,
  };
  if (channel !== null) {
    const hold = tensor.retain(); // the sender's release waits for the receiver's
    pendingReleases += 1;
    channel.port1.onmessage = () => {
      channel.port1.close();
      pendingReleases -= 1;
      hold();
    };
  }
  tensor.dispose();
  const transfer: Transferable[] = [];
  if (path !== "shared") transfer.push(buffer as ArrayBuffer);
  if (channel !== null) transfer.push(channel.port2);
  return { message, transfer, path, bytesCopied, reason };
}

/** Whether `value` is a message made by {@link packTensorForThread}. */
export function isThreadTensorMessage(value: unknown): value is ThreadTensorMessage {
  return value !== null && typeof value === "object" && (value as { tag?: unknown }).tag === THREAD_TENSOR_TAG;
}

/**
 * The tensor a {@link packTensorForThread} message carries, as a `"js"`
 * tensor over the message's buffer (transferred, copied or shared — no copy
 * here). Disposing it (or its garbage collection) tells the sender, once.
 * Throws INVALID_ARGUMENT for anything that is not such a message.
 */
export function tensorFromThread(message: unknown): Tensor {
  if (!isThreadTensorMessage(message)) {
    throw new WebDLPackError("INVALID_ARGUMENT", "not a webdlpack thread tensor message", {
      field: "message",
      value: describeValue(message),
      expected: `an object with tag "${THREAD_TENSOR_TAG}" from packTensorForThread`,
    });
  }
  const { buffer, byteOffset, nbytes, release } = message;
  const refuse = (err: unknown): never => {
    if (release instanceof MessagePort) release.postMessage("released"); // the sender's hold is freed anyway
    throw err;
  };
  const validPath = ["transfer", "copy", "shared"].includes(message.path);
  if (
    !validPath ||
    !Number.isSafeInteger(byteOffset) ||
    !Number.isSafeInteger(nbytes) ||
    byteOffset < 0 ||
    nbytes < 0 ||
    !(
      buffer instanceof ArrayBuffer ||
      (typeof SharedArrayBuffer === "function" && buffer instanceof SharedArrayBuffer)
    ) ||
    byteOffset + nbytes > buffer.byteLength
  ) {
    refuse(
      new WebDLPackError("INVALID_ARGUMENT", "malformed thread tensor message", {
        field: "message",
        value: `path ${String(message.path)}, bytes [${byteOffset}, ${byteOffset + nbytes}) of ${String(buffer?.byteLength)}`,
        expected: "path transfer/copy/shared and a byte range inside the buffer",
      }),
    );
  }
  let dtype: ReturnType<typeof parseDType>;
  try {
    dtype = parseDType(message.dtype, "message.dtype");
  } catch (err) {
    return refuse(err); // the sender's hold is freed, as for the checks above
  }
  const onRelease =
    release === null
      ? undefined
      : () => {
          release.postMessage("released");
          release.close();
        };
  // A refused description runs onRelease before the error (ownership was passed in): the sender's hold is freed.
  return Tensor.fromTypedArray(new Uint8Array(buffer, byteOffset, nbytes), {
    dtype,
    shape: message.shape,
    reinterpret: true,
    readOnly: message.readOnly,
    isCopied: message.path === "copy",
    onRelease,
  });
}
