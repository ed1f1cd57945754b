/**
 * Element-type tables between webdlpack (DLPack `DLDataType`), ONNX Runtime
 * Web (`ort.Tensor.type` strings) and TensorFlow.js (`tf.Tensor.dtype`).
 *
 * Rule: a type crosses unchanged only when both sides store it with the same
 * bytes. Where the widths differ (TF.js `bool` is one int32 per element, DLPack
 * and ORT `bool` one byte) the adapters convert on the GPU and mark the result
 * IS_COPIED; where a side has no such type the lookup throws UNSUPPORTED naming
 * both sides. Bytes are never reinterpreted silently.
 */
import { WebDLPackError } from "../errors.js";
import { DataTypeCode } from "../dlpack/constants.js";
import { formatDType, parseDType, type DType } from "../dlpack/dtype.js";
import type { OrtGpuBufferDataType } from "./framework-types.js";

/** ORT's name for each webdlpack dtype name it has with identical bytes. */
const DLPACK_TO_ORT: Readonly<Record<string, string>> = {
  float32: "float32",
  float16: "float16",
  float64: "float64",
  int8: "int8",
  int16: "int16",
  int32: "int32",
  int64: "int64",
  uint8: "uint8",
  uint16: "uint16",
  uint32: "uint32",
  uint64: "uint64",
  bool: "bool",
};

const ORT_TO_DLPACK: Readonly<Record<string, DType>> = Object.fromEntries(
  Object.entries(DLPACK_TO_ORT).map(([dl, ortName]) => [ortName, parseDType(dl)]),
);

/** The ORT types `ort.Tensor.fromGpuBuffer` accepts (onnxruntime-common `GpuBufferDataTypes`). */
export const ORT_GPU_BUFFER_TYPES: ReadonlySet<OrtGpuBufferDataType> = new Set<OrtGpuBufferDataType>([
  "float32",
  "float16",
  "int32",
  "int64",
  "uint32",
  "uint8",
  "bool",
]);

/** Whether `ort.Tensor.fromGpuBuffer` takes the ORT type `name`. */
export function isOrtGpuBufferType(name: string): name is OrtGpuBufferDataType {
  return (ORT_GPU_BUFFER_TYPES as ReadonlySet<string>).has(name);
}

/** A dtype's name for messages, never throwing (an invalid dtype prints its fields). */
export function dtypeName(dtype: DType): string {
  try {
    return formatDType(dtype);
  } catch {
    return `{code: ${dtype.code}, bits: ${dtype.bits}, lanes: ${dtype.lanes}}`;
  }
}

/**
 * The ORT type name for a webdlpack dtype (`float32` → `"float32"`, `bool` → `"bool"`).
 * Throws UNSUPPORTED for types ORT Web lacks (bfloat16, complex, float8, lanes > 1, …).
 */
export function ortTypeOf(dtype: DType): string {
  const name = dtypeName(dtype);
  const ortName = DLPACK_TO_ORT[name];
  if (ortName === undefined) {
    const takes = Object.keys(DLPACK_TO_ORT).join(", ");
    throw new WebDLPackError(
      "UNSUPPORTED",
      `ONNX Runtime Web has no tensor type for webdlpack dtype ${name}; it takes ${takes}`,
      {
        field: "dtype",
        value: name,
        expected: `one of ${takes}`,
      },
    );
  }
  return ortName;
}

/** The webdlpack dtype for an ORT type name. Throws UNSUPPORTED for `string`, `int4`, `uint4` and unknown names. */
export function dtypeOfOrt(ortType: string): DType {
  const dtype = ORT_TO_DLPACK[ortType];
  if (dtype === undefined) {
    throw new WebDLPackError(
      "UNSUPPORTED",
      `webdlpack has no equivalent of ORT type ${JSON.stringify(ortType)} (ort ${ortType} → webdlpack ?)`,
      {
        field: "ort.Tensor.type",
        value: ortType,
        expected: `one of ${Object.keys(ORT_TO_DLPACK).join(", ")} (int4/uint4 are packed two per byte, strings have no fixed width)`,
      },
    );
  }
  return dtype;
}

/** How a webdlpack dtype crosses into TF.js. */
export interface TfjsTypeMapping {
  /** The TF.js dtype. */
  readonly tfjs: "float32" | "int32" | "bool";
  /** True if the bytes must be converted (bool: 1 byte → 4 bytes). */
  readonly convert: boolean;
}

const TFJS_FLOAT32: TfjsTypeMapping = Object.freeze({ tfjs: "float32", convert: false });
const TFJS_INT32: TfjsTypeMapping = Object.freeze({ tfjs: "int32", convert: false });
const TFJS_BOOL: TfjsTypeMapping = Object.freeze({ tfjs: "bool", convert: true });

/** The cast that makes a `name` tensor one TF.js can take (where it is made: TF.js itself has no `name`). */
function tfjsCast(name: string): string {
  if (name.startsWith("complex")) return "split it into two float32 tensors (real and imaginary parts)";
  if (/^(int|uint)\d+$/.test(name)) {
    const fits = name === "int8" || name === "uint8" || name === "int16" || name === "uint16";
    return `cast it to int32${fits ? "" : " (every value must fit in 32 bits)"}`;
  }
  if (/^(float|bfloat)/.test(name)) return `cast it to float32${name === "float64" ? " (losing precision)" : ""}`;
  return "cast it to float32 or int32";
}

/**
 * The TF.js dtype for a webdlpack dtype: float32 and int32 cross as they are,
 * bool (1 byte) becomes TF.js bool (one int32 per element) through a GPU
 * conversion. Everything else throws UNSUPPORTED naming the dtypes TF.js takes
 * and the cast to make first, e.g. "TF.js has no int64 tensors ... cast it to int32".
 */
export function tfjsTypeOf(dtype: DType): TfjsTypeMapping {
  // The hand-off's own types by their fields, without formatting a name (every tensorToTfjs asks).
  if (dtype.lanes === 1 && dtype.bits === 32) {
    if (dtype.code === DataTypeCode.kDLFloat) return TFJS_FLOAT32;
    if (dtype.code === DataTypeCode.kDLInt) return TFJS_INT32;
  }
  const name = dtypeName(dtype);
  if (name === "float32") return TFJS_FLOAT32;
  if (name === "int32") return TFJS_INT32;
  if (name === "bool") return TFJS_BOOL;
  throw new WebDLPackError(
    "UNSUPPORTED",
    `TF.js has no ${name} tensors: on the GPU a TF.js tensor is float32, int32 or bool. Before handing the ` +
      `tensor to TF.js, ${tfjsCast(name)} where it is made (e.g. NumPy's x.astype(...), a Cast node in an ONNX model)`,
    { field: "dtype", value: name, expected: "float32, int32 or bool" },
  );
}

/** The webdlpack dtype for a TF.js dtype (`bool` → webdlpack bool, 1 byte, after conversion). */
export function dtypeOfTfjs(tfjsType: string): { dtype: DType; convert: boolean } {
  if (tfjsType === "float32" || tfjsType === "int32") return { dtype: parseDType(tfjsType), convert: false };
  if (tfjsType === "bool") return { dtype: parseDType("bool"), convert: true };
  throw new WebDLPackError(
    "UNSUPPORTED",
    `webdlpack cannot take a TF.js ${tfjsType} tensor: it takes TF.js float32, int32 and bool. ` +
      (tfjsType === "complex64"
        ? "Hand over tf.real(x) and tf.imag(x) (two float32 tensors)"
        : tfjsType === "string"
          ? "A string tensor has no fixed-width elements: encode it as numbers first"
          : "Cast it with tf.cast(x, 'float32') or tf.cast(x, 'int32') first"),
    { field: "tf.Tensor.dtype", value: tfjsType, expected: "float32, int32 or bool" },
  );
}
