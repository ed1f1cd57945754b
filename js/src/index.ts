/**
 * webdlpack — DLPack tensor exchange for the web.
 *
 * Layers, bottom up (a file imports only from its own layer or the ones
 * before it; tests/js/import-graph.test.ts checks this list, and no cycles):
 *   errors.ts     typed errors; describe-value.ts, how values read in them; dispose-symbol.ts, Symbol.dispose for the .d.ts
 *                 release.ts, the one release mechanism every holder goes through (docs/ownership.md)
 *   arguments.ts  typed checks of entry-point arguments and options bags (internal)
 *   assets.ts     the files shipped next to the JS (Python wheel, C side module)
 *   dlpack/       the DLPack data model and the codec over wasm linear memory
 *   context/      page-wide registries: the WebDLPackContext (WebGPU devices, GPU
 *                 pointer table, allocator, ledger, GPU memory, GPU transfers; rooms ordered in
 *                 context/index.ts) and the Python hand-off list
 *   tensor/       the JS-side tensor: class, CPU view, GPU side, DLPack export
 *   bridge/       hand-offs to Python (Pyodide), to C libraries in wasm, and of CPU tensors to other threads
 *   adapters/     ONNX Runtime Web, Transformers.js, TensorFlow.js, LiteRT.js, TypedArray, GPUBuffer (`webdlpack/adapters`)
 *   from-python/  the JS half the Python package ships and loads itself when no page loaded it (its own entry)
 *   testing/      test support: an in-JS WasmHost (`webdlpack/testing`)
 *   conformance/  the Web DLPack v1 conformance kit (`webdlpack/conformance`, docs/spec.md)
 *   index.ts      this entry
 */
// The public surface, name by name: what README.md and docs/*.md name, and the types their signatures use
// (docs/api.md says what each value is for; api/webdlpack.api.md is the report `make api-report` writes and the
// lint suite checks). Everything else is internal: tests import it by its module's path.
export { WebDLPackError, ErrorCode, type ErrorCodeName, type ErrorDetails } from "./errors.js";
export type { Release } from "./release.js";
export {
  DLPACK_VERSION,
  DeviceType,
  DataTypeCode,
  DLPackFlag,
  LAYOUT,
  parseDType,
  formatDType,
  typedArrayFor,
  storageBytes,
  elementCount,
  contiguousStrides,
  emscriptenHost,
  type DType,
  type DeviceTypeName,
  type DataTypeCodeName,
  type TypedArray,
  type TypedArrayInfo,
  type TypedArrayConstructorLike,
  type StructLayout,
  type StructName,
  type DLDeviceDesc,
  type DLTensorDesc,
  type DLPackVersionDesc,
  type ManagedTensorDesc,
  type WasmHost,
  type EmscriptenModuleLike,
  type AllocatorSource,
} from "./dlpack/index.js";
export {
  getContext,
  CONTEXT_PROTOCOL,
  CONTEXT_MEMBERS_ADDED,
  missingContextMembers,
} from "./context/get-context.js";
export type {
  WebDLPackContext,
  ContextProtocol,
  AllocOptions,
  RegisterBufferOptions,
  GPUPointerInfo,
  ContextStats,
  DeviceStats,
  OwnerStats,
  CacheModeOptions,
  DeviceOptions,
} from "./context/types.js";
export {
  ML_LIMITS,
  ML_FEATURES,
  type SetupConfig,
  type DeviceInfo,
  type LimitsSummary,
} from "./context/devices/setup.js";
export type { AdapterInfoSummary, DeviceLostEvent, DeviceLostListener } from "./context/devices/registry.js";
export { unwrapDevice } from "./context/devices/guard.js";
export { describeGPUPointer, type GPUPointer, type PointerParts } from "./context/pointers/pointer-format.js";
export type { CacheMode } from "./context/options.js";
export type { CacheLimits } from "./context/allocation/buffer-cache.js";
export type { ThrottleLimits } from "./context/allocation/destroy-throttle.js";
export type {
  LedgerView,
  TrackedEntry,
  LedgerKind,
  ReleaseReason,
  TrackOptions,
  LedgerEntryInfo,
  LedgerEntrySummary,
  LeakReport,
  LedgerDebug,
} from "./context/ledger/entry.js";
export type { MemoryOwnerReport, MemoryReport } from "./context/memory/context-memory.js";
export type {
  MemoryPressure,
  MemoryPressureHandler,
  MemoryPressureOptions,
  PressureReason,
} from "./context/memory/pressure.js";
export type { ByteRange, HostBytes, CopyRange, ReadbackRange, ReadbackTarget } from "./context/transfers/targets.js";
export type { TransferStats } from "./context/transfers/device-transfers.js";
export type { UploadPath, UploadWay } from "./context/transfers/write.js";
export type { RingStats } from "./context/transfers/ring.js";
export type { Calibration, UploadFigures } from "./context/transfers/calibrate.js";
export type { ReadFigures } from "./context/transfers/calibrate-read.js";
export type { PieceFigure } from "./context/transfers/calibrate-warm.js";
export {
  Tensor,
  liveExportCount,
  trimExportBlocks,
  finalizerStats,
  type StorageKind,
  type TensorFlags,
  type TensorLayoutInput,
  type TypedArrayTensorOptions,
  type ToManagedOptions,
  type FromManagedOptions,
  type WebGPUTensorInput,
} from "./tensor/index.js";
export { loadWebDLPack, type LoadWebDLPackOptions, type WebDLPackPython, type PythonInfo } from "./bridge/pyodide.js";
export type { PyodideLike, PyProxyLike } from "./bridge/pyodide-types.js";
export {
  loadWebDLPackC,
  type LoadWebDLPackCOptions,
  type WebDLPackCLib,
  type ClibPyodide,
  type ClibModule,
  type ClibFS,
  type ClibGpuStats,
} from "./bridge/clib/load.js";
export type { ClibTransfers } from "./bridge/clib/transfers.js";
export type { HeapSource } from "./bridge/clib/memory.js";
export type { WebDLPackCExports } from "./bridge/clib/abi.js";
export type { TensorHandleTable } from "./bridge/clib/handles.js";
export {
  packTensorForThread,
  tensorFromThread,
  pendingThreadReleases,
  THREAD_TENSOR_TAG,
  type PackForThreadOptions,
  type PackedThreadTensor,
  type ThreadMovePath,
  type ThreadTensorMessage,
} from "./bridge/threads.js";
export { loadAssetBytes, type AssetKind, type AssetOptions, type LoadedAsset } from "./assets.js";
