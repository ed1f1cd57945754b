/**
 * The one hand-off of a webdlpack WebGPU tensor to a framework (ORT, TF.js, LiteRT.js, tvmjs), and its record:
 * shared bytes or a copy, and why. Every adapter's `tensorTo…` calls {@link handOffGPUTensor}, which decides
 * once — in place, else refuse (`copy: "never"`), else copy on the GPU — with one lookup of the tensor's buffer.
 * A framework tensor has no DLPack flags, so the IS_COPIED fact is recorded here, keyed by the framework tensor.
 */
import { WebDLPackError } from "../errors.js";
import type { WebDLPackContext } from "../context/index.js";
import type { Tensor } from "../tensor/index.js";
import { once } from "../release.js";
import { copyLocatedGPUTensor, locateCheckedGPUTensor, type GPUTensorLocation } from "./gpu-buffer.js";
import type { GpuCopyKind } from "./gpu-copy.js";

/** How a framework tensor made by an adapter relates to its webdlpack source. */
export interface HandoffInfo {
  /** The framework tensor reads the very same GPUBuffer / ArrayBuffer (no copy). */
  readonly zeroCopy: boolean;
  /** A copy was made (the DLPack IS_COPIED fact). Always `!zeroCopy`. */
  readonly isCopied: boolean;
  /** Why a copy was needed (null when none was). */
  readonly reason: string | null;
}

const records = new WeakMap<object, HandoffInfo>();
/** Every zero-copy hand-off's record (frozen, so one object serves them all). */
const ZERO_COPY: HandoffInfo = Object.freeze({ zeroCopy: true, isCopied: false, reason: null });

/** Copies made for each framework (its name in {@link GPUHandoff.name}) since the page loaded. */
const copies = new Map<string, { count: number; bytes: number }>();

/** Remember how `frameworkTensor` was made. */
export function recordHandoff(frameworkTensor: object, reason: string | null): void {
  records.set(
    frameworkTensor,
    reason === null ? ZERO_COPY : Object.freeze({ zeroCopy: false, isCopied: true, reason }),
  );
}

/** Count one copy of `bytes` made for framework `name` (every hand-off copy, GPU or CPU, is counted here). */
export function countHandoffCopy(name: string, bytes: number): void {
  const row = copies.get(name);
  if (row === undefined) copies.set(name, { count: 1, bytes });
  else {
    row.count++;
    row.bytes += bytes;
  }
}

/** How many hand-offs to framework `name` were copies, and their bytes, since the page loaded. */
export function handoffCopyStats(name: string): { readonly count: number; readonly bytes: number } {
  const row = copies.get(name);
  return { count: row?.count ?? 0, bytes: row?.bytes ?? 0 };
}

/**
 * How an adapter made `frameworkTensor` (from `tensorToOrt` / `tensorToTfjs`),
 * or undefined if no adapter made it.
 */
export function handoffInfo(frameworkTensor: object): HandoffInfo | undefined {
  return records.get(frameworkTensor);
}

/** Why a READ_ONLY tensor is copied for framework `name`, which may write what it is given. */
export function readOnlyReason(name: string): string {
  return `the tensor is READ_ONLY and ${name} may write its input`;
}

/** The refusal of a READ_ONLY tensor offered with `copy: "never"` to framework `name`, which may write it. */
export function readOnlyRefusal(name: string): WebDLPackError {
  return new WebDLPackError(
    "COPY_REQUIRED",
    `${name} cannot take this tensor without a copy: ${readOnlyReason(name)}`,
    {
      field: "tensor.flags.readOnly",
      value: true,
      expected: "a writable tensor, or copy: 'auto'",
    },
  );
}

/**
 * True when `tensor`'s pointer is a read-only one (context/pointers/read-only.ts: lent read-only, e.g. a READ_ONLY
 * export's, wrapped again without the flag): a consumer that may write gets it only as a READ_ONLY tensor would be.
 */
function lentReadOnly(tensor: Tensor, ctx: WebDLPackContext): boolean {
  // `readOnly` may be missing: the page's context can be an older copy's, made before read-only pointers.
  return (ctx.gpuPointerInfo(tensor.data) as { readOnly?: boolean }).readOnly === true;
}

/** A hand-off's `copy` option: share when possible ("auto"), share or refuse ("never"), or copy ("always"). */
export type CopyMode = "auto" | "never" | "always";

/** What one framework needs to take a webdlpack WebGPU tensor (`T`: the framework's tensor). */
export interface GPUHandoff<T extends object> {
  /** The framework's name in messages and in the copy counts, e.g. "ORT", "tvmjs". */
  readonly name: string;
  /** The caller's `copy` option. */
  readonly copy: CopyMode;
  /** Why the framework cannot read the tensor at `loc` in place (offset, strides, usage…), or null when it can. */
  inPlace(loc: GPUTensorLocation): string | null;
  /**
   * True when the framework may write through what it is given (a tvmjs in-place function, an ORT pre-allocated
   * output): a READ_ONLY tensor, or one over a read-only pointer, is then never lent — copied, or refused with
   * `copy: "never"` (DLPack: the consumer of a READ_ONLY tensor must not write it).
   */
  readonly mayWrite: boolean;
  /** What a copy does to the elements (default "copy"; TF.js's bool: "bool8-to-u32"). */
  readonly kind?: GpuCopyKind;
  /** What the framework can read in place, for COPY_REQUIRED's `expected`. */
  readonly expected: string;
  /** The framework tensor over what {@link HandedOver} gives. */
  make(given: HandedOver): T;
}

/** What a framework's tensor is made over in a hand-off. */
export interface HandedOver {
  /** The buffer to read: the source's own, or the copy's. */
  readonly buffer: GPUBuffer;
  /**
   * Lets go of the bytes (the source's hold, or the copy): the framework runs it when it drops its tensor; if
   * `make` throws it is run for it. It acts once however often it is called.
   */
  readonly release: () => void;
  /** The copy, when one was made (null: `buffer` is the source's). */
  readonly copied: Tensor | null;
  /** Where the source is (its device, byte offset, layout), as the hand-off located it. */
  readonly source: GPUTensorLocation;
}

/**
 * Hand the WebGPU `tensor` to a framework: the very same buffer when the framework can read it in place (and
 * will not write a READ_ONLY tensor), else a GPU copy — stated in {@link handoffInfo} and counted in
 * {@link handoffCopyStats} — or, with `copy: "never"`, COPY_REQUIRED naming the reason. The tensor is looked up
 * once (after the pointer's register check, so a refused or destroyed buffer is never handed on); a copy is made
 * from that lookup and hands back its own buffer.
 */
export async function handOffGPUTensor<T extends object>(
  tensor: Tensor,
  ctx: WebDLPackContext,
  h: GPUHandoff<T>,
): Promise<T> {
  const loc = await locateCheckedGPUTensor(tensor, ctx);
  const blocker = h.copy === "always" ? "copy: 'always'" : h.inPlace(loc);
  const readOnly = blocker === null && h.mayWrite && (tensor.flags.readOnly || lentReadOnly(tensor, ctx));
  if (blocker === null && !readOnly) {
    const release = once(tensor.retain());
    let out: T;
    try {
      out = h.make({ buffer: loc.buffer, release, copied: null, source: loc });
    } catch (err) {
      release();
      throw err;
    }
    recordHandoff(out, null);
    return out;
  }
  if (h.copy === "never") {
    if (blocker === null) throw readOnlyRefusal(h.name);
    throw new WebDLPackError("COPY_REQUIRED", `${h.name} cannot read this tensor in place: ${blocker}`, {
      field: "tensor",
      value: blocker,
      expected: `${h.expected}, or copy: 'auto'`,
    });
  }
  const reason = blocker ?? readOnlyReason(h.name);
  const copied = await copyLocatedGPUTensor(tensor, loc, { ctx, kind: h.kind ?? "copy" });
  const release = once(() => copied.tensor.dispose());
  let out: T;
  try {
    out = h.make({ buffer: copied.buffer, release, copied: copied.tensor, source: loc });
  } catch (err) {
    release();
    throw err;
  }
  countHandoffCopy(h.name, copied.tensor.nbytes);
  recordHandoff(out, reason);
  return out;
}
