/**
 * Read-only pointers: how the pointer table keeps a READ_ONLY lending apart from its owner's rights. One pointer
 * names one holder's rights on a buffer, not the buffer: the pointer a buffer was allocated or registered under
 * keeps its writes, and a consumer that is lent the buffer read-only gets a pointer of its own whose table entry
 * says `readOnly` — `registerGPUBuffer(buffer, {readOnly: true})`, which for a buffer already in the table makes
 * that second pointer (never owning the buffer; freeing it forgets the pointer only). A READ_ONLY WebGPU tensor's
 * DLPack export names such a pointer (tensor/dlpack-export.ts), and so does the TF.js adapter's share of TF.js's
 * own buffer. Every write webdlpack makes through a pointer — `ctx.upload`, the destination of `ctx.copyBuffer`,
 * `ctx.clearBuffer`, and with them Python's and C's uploads — checks that one bit (transfers/context-calls.ts)
 * and refuses a read-only pointer with BAD_FLAGS ({@link readOnlyPointerError}). docs/gpu-pointers.md.
 */
import { WebDLPackError } from "../../errors.js";
import { formatPointer, type GPUPointer, type RegisterBufferOptions } from "./pointer-format.js";
import { ownerLabel } from "../ledger/entry.js";
import type { DeviceRecord } from "../devices/registry.js";

/** What the table holds of a pointer that a read-only second pointer copies (buffer-table.ts BufferEntry). */
interface Source {
  readonly buffer: GPUBuffer;
  readonly device: DeviceRecord;
  readonly requestedSize: number;
  readonly size: number;
  readonly usage: number;
  readonly owner: string | undefined;
  readonly watched?: boolean;
}

/**
 * The table entry (buffer-table.ts BufferInit) of a second, read-only pointer to the buffer of `source` (live
 * pointer `of`), as `opts` ask.
 */
export function readOnlyInit(source: Source, of: GPUPointer, opts: RegisterBufferOptions) {
  if (opts.owned === true) {
    throw new WebDLPackError("INVALID_ARGUMENT", "a second, read-only pointer to a buffer can not own it", {
      field: "options.owned",
      value: true,
      expected: `false (the buffer is ${formatPointer(of)}'s)`,
    });
  }
  if (opts.deviceId !== undefined && opts.deviceId !== source.device.id) {
    throw new WebDLPackError("BAD_DEVICE", `the buffer of ${formatPointer(of)} is on device ${source.device.id}`, {
      field: "options.deviceId",
      value: opts.deviceId,
      expected: `${source.device.id} (or none)`,
    });
  }
  const owner = opts.owner ?? source.owner;
  return {
    buffer: source.buffer,
    device: source.device,
    requestedSize: source.requestedSize,
    size: source.size,
    usage: source.usage,
    owned: false,
    owner,
    ownerLabel: ownerLabel(owner),
    onRelease: opts.onRelease,
    pooled: false,
    watched: source.watched,
    readOnly: true,
  };
}

/** The refusal of a write (`operation`) through read-only pointer `ptr`. */
export function readOnlyPointerError(ptr: GPUPointer, operation: string): WebDLPackError {
  return new WebDLPackError(
    "BAD_FLAGS",
    `${operation} refused: GPU pointer ${formatPointer(ptr)} is lent read-only (its tensor is READ_ONLY) and ` +
      "webdlpack never writes through it; copy the tensor first (copyGPUTensor, or ctx.copyBuffer into your own " +
      "allocation) and write the copy",
    {
      field: "tensor.flags.readOnly",
      value: formatPointer(ptr),
      expected: "a pointer you hold writable (the owner's), or a copy",
    },
  );
}
