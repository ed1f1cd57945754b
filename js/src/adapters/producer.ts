/**
 * How the adapters hand a GPU buffer to webdlpack: as a DLPack producer.
 *
 * `Tensor.webgpu()` takes no ownership and carries no IS_COPIED flag, but an
 * adopted buffer must stay alive until every holder lets go (ORT reuses a
 * disposed output's buffer). So each adapter tensor is made the DLPack way: the
 * adapter writes a `DLManagedTensorVersioned` (flags READ_ONLY / IS_COPIED,
 * a deleter) into a small private JS-side heap and `Tensor.fromManaged` takes
 * it. The Tensor then calls the deleter exactly once — on `dispose()`, from its
 * garbage-collection safety net, or when the last `toManaged` export of it
 * (e.g. to Python) is deleted — and the deleter runs the adapter's release.
 */
import { DeviceType, DLPackFlag } from "../dlpack/constants.js";
import type { DType } from "../dlpack/dtype.js";
import { createTestHost, type TestHost } from "../dlpack/test-host.js";
import { writeManagedTensorVersioned } from "../dlpack/write.js";
import { callManagedDeleter } from "../dlpack/read.js";
import { Tensor } from "../tensor.js";

/** What {@link produceGPUTensor} needs. */
export interface ProducedGPUTensor {
  /** GPU pointer (from the context's table) naming the buffer. */
  pointer: number;
  /** webdlpack device id of the buffer. */
  deviceId: number;
  dtype: DType | string;
  shape: readonly number[];
  /** Strides in elements, or null/undefined for C-contiguous. */
  strides?: readonly number[] | null;
  /** Bytes from the buffer start to the first element (default 0). */
  byteOffset?: number;
  /** Consumers must not write (a buffer another framework still reads). */
  readOnly?: boolean;
  /** The adapter made this copy for the consumer. */
  isCopied?: boolean;
  /** Runs exactly once when the Tensor and every export of it are released. */
  release: () => void;
}

/** The private heap holding the adapters' managed structs, and its one deleter. */
interface ProducerHeap {
  host: TestHost;
  deleter: number;
  releases: Map<number, () => void>;
}

let heap: ProducerHeap | null = null;

function producerHeap(): ProducerHeap {
  if (heap !== null) return heap;
  // One page (64 KiB) holds ~800 structs of ndim 4; it grows to 256 pages if needed.
  const host = createTestHost(1, 256);
  const releases = new Map<number, () => void>();
  const deleter = host.addFunction((address: number) => {
    const release = releases.get(address);
    releases.delete(address);
    host.free(address);
    release?.();
  });
  heap = { host, deleter, releases };
  return heap;
}

/** Number of adapter-made tensors whose release has not run yet (for tests and leak checks). */
export function liveProducedTensors(): number {
  return heap === null ? 0 : heap.releases.size;
}

/**
 * Make a webdlpack WebGPU Tensor over `pointer` whose release runs once when the
 * Tensor and all its exports are done. If the description is invalid, `release`
 * runs before the error is thrown (ownership was passed in).
 */
export function produceGPUTensor(input: ProducedGPUTensor): Tensor {
  const { host, deleter, releases } = producerHeap();
  const flags = (input.readOnly ? DLPackFlag.READ_ONLY : 0) | (input.isCopied ? DLPackFlag.IS_COPIED : 0);
  let address: number;
  try {
    address = writeManagedTensorVersioned(host, {
      data: input.pointer >>> 0,
      device: { deviceType: DeviceType.kDLWebGPU, deviceId: input.deviceId },
      dtype: input.dtype,
      shape: input.shape,
      strides: input.strides ?? null,
      byteOffset: input.byteOffset ?? 0,
      deleter,
      flags,
      explicitStrides: false,
    });
  } catch (err) {
    input.release();
    throw err;
  }
  releases.set(address, input.release);
  // fromManaged calls the deleter (so the release) itself if decoding fails.
  return Tensor.fromManaged(host, address);
}

/**
 * Keep `tensor`'s bytes alive for one more holder (a framework tensor made from
 * it without a copy); returns that holder's release (idempotent).
 *
 * It uses DLPack's own mechanism: the tensor is exported with `toManaged` into
 * the adapters' private heap, which holds the producer's ownership until the
 * export's deleter runs. So the producer (an ORT output, a TF.js tensor, Python)
 * keeps its buffer until the webdlpack Tensor is disposed AND every holder released.
 * A tensor without an owner (`Tensor.webgpu(...)`: the caller manages its
 * buffer) is exported too, but then only the caller's own care keeps it alive.
 */
export function retainTensor(tensor: Tensor): () => void {
  const { host } = producerHeap();
  const address = tensor.toManaged(host);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    callManagedDeleter(host, address);
  };
}
