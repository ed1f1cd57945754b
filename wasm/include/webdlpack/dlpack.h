/*
 * webdlpack/dlpack.h — the DLPack 1.x data structures, as webdlpack uses them.
 *
 * This header is the single source of truth for the tensor-exchange layout.
 * The JS codec (js/src/dlpack/layout.ts) and the Python ctypes mirror
 * (py/webdlpack/core/abi.py) copy these sizes and offsets; tests/js/clib-layout.test.ts
 * compares the JS copy with what emcc computes (build/layout/wasm32.json, made by
 * wasm/tools/layout_probe.c), and the Python tests compare theirs with the same file.
 *
 * The layout and enum values are facts of the DLPack ABI; the text is ours.
 * On wasm32 pointers are 4 bytes and int64_t is 8-byte aligned, so:
 *   sizeof(DLTensor) == 40, offsetof(DLTensor, byte_offset) == 32
 *   sizeof(DLManagedTensor) == 48
 *   sizeof(DLManagedTensorVersioned) == 64,
 *   offsetof(DLManagedTensorVersioned, dl_tensor) == 24
 *
 * Living next to upstream dlpack.h (dmlc/DLPack 1.x, include guard DLPACK_DLPACK_H_):
 *   - upstream included first: this header defines nothing of DLPack's own; it
 *     uses upstream's types and checks at compile time that they have the
 *     layout, enum values and flag bits below (major 1, minor >= 1 required).
 *   - this header first: it defines the DLPack 1.1 core (versions, enums,
 *     DLDevice, DLDataType, DLTensor, both managed tensors, flag bits,
 *     DLPACK_EXTERN_C, DLPACK_DLL) and defines DLPACK_DLPACK_H_, so a later
 *     `#include <dlpack/dlpack.h>` is skipped by upstream's own guard. Code that
 *     also needs what newer upstream headers add (e.g. DLPackExchangeAPI of 1.2+)
 *     includes upstream first, or defines WEBDLPACK_DLPACK_HEADER to it
 *     (`-DWEBDLPACK_DLPACK_HEADER='<dlpack/dlpack.h>'`) so this header includes it.
 *   Either way there is one definition of each type, and the checks at the end of
 *   this file hold for it. `make test-c` compiles both orders with gcc, g++ and
 *   emcc against the dlpack.h of the apache-tvm-ffi wheel (DLPack 1.3).
 *
 * Ownership contract (applies to both managed structs):
 *   - The producer allocates the struct, the shape/strides arrays and the data.
 *   - The consumer that takes the struct calls `deleter(self)` exactly once
 *     when it no longer needs the tensor; after that it touches nothing.
 *   - A consumer that cannot use the struct (for example a major-version
 *     mismatch) still calls the deleter, and reads nothing else.
 */
#ifndef WEBDLPACK_DLPACK_H_
#define WEBDLPACK_DLPACK_H_

#include <stddef.h>
#include <stdint.h>

#if !defined(DLPACK_DLPACK_H_) && defined(WEBDLPACK_DLPACK_HEADER)
#include WEBDLPACK_DLPACK_HEADER
#endif

/** The DLPack version webdlpack writes into the tensors it makes, and reads. */
#define WDL_DLPACK_MAJOR_VERSION 1
/** Its minor: DLPack 1.1 (the flag bits and dtype codes below). */
#define WDL_DLPACK_MINOR_VERSION 1

#ifdef DLPACK_DLPACK_H_
/* ---- upstream dlpack.h came first: use its definitions, checked below. ---- */
#if !defined(DLPACK_MAJOR_VERSION) || DLPACK_MAJOR_VERSION != 1
#error \
    "webdlpack needs DLPack 1.x: the dlpack.h included before webdlpack/dlpack.h is another major (0.x has no DLManagedTensorVersioned)"
#endif
#if DLPACK_MINOR_VERSION < 1
#error "webdlpack needs DLPack >= 1.1 (DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, fp8/fp6/fp4 codes)"
#endif
#else
/* ---- no upstream header yet: define the DLPack 1.1 core here. ---- */
#define DLPACK_DLPACK_H_

#ifdef __cplusplus
#define DLPACK_EXTERN_C extern "C"
#else
#define DLPACK_EXTERN_C
#endif
#ifndef DLPACK_DLL
#define DLPACK_DLL
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Major version: a change means the DLManagedTensorVersioned layout changed. */
#define DLPACK_MAJOR_VERSION 1
/** Minor version: a change adds enum values only; the layout is unchanged. */
#define DLPACK_MINOR_VERSION 1

/** A DLPack ABI version; always the first field of a versioned tensor. */
typedef struct {
  uint32_t major; /**< ABI major version; consumers refuse a different major. */
  uint32_t minor; /**< ABI minor version; newer minors only add enum values. */
} DLPackVersion;

/** Where the bytes of a tensor live. Stored as a 32-bit int. */
typedef enum {
  kDLCPU = 1,          /**< Host memory; on the web: the wasm linear memory. */
  kDLCUDA = 2,         /**< CUDA device memory. */
  kDLCUDAHost = 3,     /**< CUDA pinned host memory. */
  kDLOpenCL = 4,       /**< OpenCL buffer. */
  kDLVulkan = 7,       /**< Vulkan buffer. */
  kDLMetal = 8,        /**< Metal buffer. */
  kDLVPI = 9,          /**< Verilog simulator buffer. */
  kDLROCM = 10,        /**< ROCm device memory. */
  kDLROCMHost = 11,    /**< ROCm pinned host memory. */
  kDLExtDev = 12,      /**< Reserved for experiments. */
  kDLCUDAManaged = 13, /**< CUDA unified memory. */
  kDLOneAPI = 14,      /**< oneAPI unified shared memory. */
  kDLWebGPU = 15,      /**< WebGPU: data is a webdlpack GPU pointer (see webdlpack.h). */
  kDLHexagon = 16,     /**< Qualcomm Hexagon DSP. */
  kDLMAIA = 17,        /**< Microsoft MAIA. */
  kDLTrn = 18,         /**< AWS Trainium. */
} DLDeviceType;

/** A device: its type and its index among devices of that type. */
typedef struct {
  int32_t device_type; /**< One of DLDeviceType (stored as int32). */
  int32_t device_id;   /**< Device index; 0 for CPU; a webdlpack device id for WebGPU. */
} DLDevice;

/** What kind of number an element is. Stored as a uint8 in DLDataType.code. */
typedef enum {
  kDLInt = 0,                /**< Signed two's-complement integer. */
  kDLUInt = 1,               /**< Unsigned integer. */
  kDLFloat = 2,              /**< IEEE 754 binary float. */
  kDLOpaqueHandle = 3,       /**< Opaque handle; meaning agreed between frameworks. */
  kDLBfloat = 4,             /**< bfloat16. */
  kDLComplex = 5,            /**< Complex: two floats, real then imaginary. */
  kDLBool = 6,               /**< Boolean, one byte per element. */
  kDLFloat8_e3m4 = 7,        /**< 8-bit float, 3 exponent bits, 4 mantissa bits. */
  kDLFloat8_e4m3 = 8,        /**< 8-bit float e4m3 (IEEE-like, with infinities). */
  kDLFloat8_e4m3b11fnuz = 9, /**< 8-bit float e4m3, bias 11, finite, unsigned zero. */
  kDLFloat8_e4m3fn = 10,     /**< 8-bit float e4m3, finite only. */
  kDLFloat8_e4m3fnuz = 11,   /**< 8-bit float e4m3, finite, unsigned zero. */
  kDLFloat8_e5m2 = 12,       /**< 8-bit float e5m2. */
  kDLFloat8_e5m2fnuz = 13,   /**< 8-bit float e5m2, finite, unsigned zero. */
  kDLFloat8_e8m0fnu = 14,    /**< 8-bit exponent-only scale, finite, unsigned. */
  kDLFloat6_e2m3fn = 15,     /**< 6-bit float e2m3 (bits must be 6). */
  kDLFloat6_e3m2fn = 16,     /**< 6-bit float e3m2 (bits must be 6). */
  kDLFloat4_e2m1fn = 17,     /**< 4-bit float e2m1 (bits must be 4). */
} DLDataTypeCode;

/** Element type: code, bit width of one lane, and lanes per element. 4 bytes. */
typedef struct {
  uint8_t code;   /**< One of DLDataTypeCode. */
  uint8_t bits;   /**< Bits per lane: 8, 16, 32, 64 (or 4/6 for sub-byte floats). */
  uint16_t lanes; /**< Lanes per element; 1 for scalars. */
} DLDataType;

/** A tensor view: it does not own anything. 40 bytes on wasm32. */
typedef struct {
  void *data;       /**< Base address: wasm heap address (CPU) or GPU pointer (WebGPU). NULL only for empty tensors. */
  DLDevice device;  /**< Where `data` lives. */
  int32_t ndim;     /**< Number of dimensions, 0 for a scalar. */
  DLDataType dtype; /**< Element type. */
  int64_t *shape;   /**< ndim extents, each >= 0. */
  int64_t *strides; /**< ndim strides in elements, or NULL for C-contiguous. */
  uint64_t byte_offset; /**< Bytes from `data` to the first element. */
} DLTensor;

/** Legacy (pre-1.0) managed tensor: a DLTensor plus a deleter. 48 bytes on wasm32. */
typedef struct DLManagedTensor {
  DLTensor dl_tensor;                            /**< The tensor being lent. */
  void *manager_ctx;                             /**< Producer's private context, may be NULL. */
  void (*deleter)(struct DLManagedTensor *self); /**< Called once by the consumer; may be NULL. */
} DLManagedTensor;

/** Flag: the consumer must not write through this tensor. */
#define DLPACK_FLAG_BITMASK_READ_ONLY (1ULL << 0)
/** Flag: the producer made a copy; the consumer owns it exclusively. */
#define DLPACK_FLAG_BITMASK_IS_COPIED (1ULL << 1)
/** Flag: sub-byte elements (fp4/fp6) are padded to a byte each, not packed. */
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1ULL << 2)

/** The DLPack 1.x exchange object. 64 bytes on wasm32. */
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;                                  /**< First so every future layout can be recognised. */
  void *manager_ctx;                                      /**< Producer's private context, may be NULL. */
  void (*deleter)(struct DLManagedTensorVersioned *self); /**< Called once by the consumer; may be NULL. */
  uint64_t flags;                                         /**< DLPACK_FLAG_BITMASK_* bits; unknown bits are an error. */
  DLTensor dl_tensor;                                     /**< The tensor being lent (offset 24 on wasm32). */
} DLManagedTensorVersioned;

#ifdef __cplusplus
}
#endif
#endif /* upstream dlpack.h or ours */

/* ---- Checks: whichever header defined the types, they have webdlpack's layout. ---- */
#if defined(__cplusplus)
#define WDL_LAYOUT_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define WDL_LAYOUT_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#if DLPACK_FLAG_BITMASK_READ_ONLY != 1 || DLPACK_FLAG_BITMASK_IS_COPIED != 2 || \
    DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED != 4
#error "DLPACK_FLAG_BITMASK_* differ from DLPack 1.1's bits 0, 1, 2"
#endif
WDL_LAYOUT_ASSERT(kDLCPU == 1 && kDLWebGPU == 15 && kDLTrn == 18, "DLDeviceType values differ from DLPack's");
WDL_LAYOUT_ASSERT(kDLInt == 0 && kDLFloat == 2 && kDLBool == 6 && kDLFloat4_e2m1fn == 17,
                  "DLDataTypeCode values differ from DLPack's");
WDL_LAYOUT_ASSERT(sizeof(DLPackVersion) == 8 && sizeof(DLDevice) == 8 && offsetof(DLDevice, device_id) == 4,
                  "DLPackVersion/DLDevice layout");
WDL_LAYOUT_ASSERT(sizeof(DLDataType) == 4 && offsetof(DLDataType, bits) == 1 && offsetof(DLDataType, lanes) == 2,
                  "DLDataType layout");

/* wasm32: the numbers JS and Python mirror (tests/js/constants.test.ts parses the WDL_WASM32_LAYOUT lines). */
#if defined(__wasm32__)
#define WDL_WASM32_LAYOUT(cond, msg) WDL_LAYOUT_ASSERT(cond, msg)
WDL_WASM32_LAYOUT(sizeof(DLTensor) == 40, "DLTensor must be 40 bytes on wasm32");
WDL_WASM32_LAYOUT(offsetof(DLTensor, byte_offset) == 32, "DLTensor.byte_offset must be at 32 on wasm32");
WDL_WASM32_LAYOUT(sizeof(DLManagedTensor) == 48, "DLManagedTensor must be 48 bytes on wasm32");
WDL_WASM32_LAYOUT(sizeof(DLManagedTensorVersioned) == 64, "DLManagedTensorVersioned must be 64 bytes on wasm32");
WDL_WASM32_LAYOUT(offsetof(DLManagedTensorVersioned, dl_tensor) == 24, "dl_tensor must be at 24 on wasm32");
#endif
/* 64-bit hosts (native tests, CPython): the same fields with 8-byte pointers. */
#if defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ == 8
WDL_LAYOUT_ASSERT(sizeof(DLTensor) == 48 && offsetof(DLTensor, ndim) == 16 && offsetof(DLTensor, shape) == 24 &&
                      offsetof(DLTensor, strides) == 32 && offsetof(DLTensor, byte_offset) == 40,
                  "DLTensor layout on 64-bit hosts");
WDL_LAYOUT_ASSERT(sizeof(DLManagedTensorVersioned) == 80 && offsetof(DLManagedTensorVersioned, flags) == 24 &&
                      offsetof(DLManagedTensorVersioned, dl_tensor) == 32,
                  "DLManagedTensorVersioned layout on 64-bit hosts");
#endif

#endif /* WEBDLPACK_DLPACK_H_ */
