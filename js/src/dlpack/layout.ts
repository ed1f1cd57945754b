/**
 * Byte layout of the DLPack structs in wasm32 linear memory.
 *
 * Source of truth: `wasm/include/webdlpack/dlpack.h` (its `_Static_assert`s pin
 * the sizes below). On wasm32 a pointer is 4 bytes and `int64_t`/`uint64_t` are
 * 8-byte aligned. Field keys use the C names so the conformance test can
 * compare this object key by key with `offsetof` from emcc and with the Python
 * ctypes mirror.
 */

/** One struct: its `size` and `align` in bytes, and the byte offset of each C field. */
export type StructLayout = Readonly<{ size: number; align: number } & Record<string, number>>;

/** Size of a pointer (`void *`, function pointer) on wasm32. */
export const POINTER_SIZE = 4;

/** Size of one `int64_t` entry of the shape / strides arrays. */
export const INT64_SIZE = 8;

/**
 * Sizes, alignments and field offsets (bytes) of every DLPack struct on wasm32.
 *
 * | struct                     | size | align | fields (offset)                                                        |
 * |----------------------------|------|-------|------------------------------------------------------------------------|
 * | DLPackVersion              |  8   | 4     | major 0, minor 4                                                       |
 * | DLDevice                   |  8   | 4     | device_type 0, device_id 4                                             |
 * | DLDataType                 |  4   | 2     | code 0, bits 1, lanes 2                                                |
 * | DLTensor                   | 40   | 8     | data 0, device 4, ndim 12, dtype 16, shape 20, strides 24, byte_offset 32 |
 * | DLManagedTensor            | 48   | 8     | dl_tensor 0, manager_ctx 40, deleter 44                                |
 * | DLManagedTensorVersioned   | 64   | 8     | version 0, manager_ctx 8, deleter 12, flags 16, dl_tensor 24           |
 */
export const LAYOUT = Object.freeze({
  DLPackVersion: Object.freeze({ size: 8, align: 4, major: 0, minor: 4 }),
  DLDevice: Object.freeze({ size: 8, align: 4, device_type: 0, device_id: 4 }),
  DLDataType: Object.freeze({ size: 4, align: 2, code: 0, bits: 1, lanes: 2 }),
  DLTensor: Object.freeze({
    size: 40,
    align: 8,
    data: 0,
    device: 4,
    ndim: 12,
    dtype: 16,
    shape: 20,
    strides: 24,
    byte_offset: 32,
  }),
  DLManagedTensor: Object.freeze({ size: 48, align: 8, dl_tensor: 0, manager_ctx: 40, deleter: 44 }),
  DLManagedTensorVersioned: Object.freeze({
    size: 64,
    align: 8,
    version: 0,
    manager_ctx: 8,
    deleter: 12,
    flags: 16,
    dl_tensor: 24,
  }),
} satisfies Record<string, StructLayout>);

/** Names of the structs described in {@link LAYOUT}. */
export type StructName = keyof typeof LAYOUT;
