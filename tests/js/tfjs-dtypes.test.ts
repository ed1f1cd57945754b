/**
 * What the TF.js and ORT dtype refusals say (issue 21, item 4): the dtypes TF.js takes and the cast to make first,
 * instead of "int64 → tfjs ?".
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { dtypeOfTfjs, ortTypeOf, tfjsTypeOf } from "../../js/src/adapters/dtypes.js";
import { parseDType } from "../../js/src/dlpack/dtype.js";
import { WebDLPackError } from "../../js/src/errors.js";

function refusal(fn: () => unknown): WebDLPackError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof WebDLPackError);
    return err;
  }
  assert.fail("expected a WebDLPackError");
}

test("webdlpack → TF.js: an int64 tensor is refused naming TF.js's dtypes and the int32 cast", () => {
  const err = refusal(() => tfjsTypeOf(parseDType("int64")));
  assert.equal(err.code, "UNSUPPORTED");
  assert.equal(err.field, "dtype");
  assert.equal(err.value, "int64");
  assert.equal(err.expected, "float32, int32 or bool");
  assert.match(err.message, /TF\.js has no int64 tensors: on the GPU a TF\.js tensor is float32, int32 or bool/);
  assert.match(err.message, /cast it to int32 \(every value must fit in 32 bits\) where it is made/);
  assert.doesNotMatch(err.message, /\?/);
});

test("webdlpack → TF.js: each refused dtype gets its own cast", () => {
  const casts: Record<string, string> = {
    int8: "cast it to int32 where",
    uint16: "cast it to int32 where",
    uint32: "cast it to int32 (every value must fit in 32 bits)",
    float16: "cast it to float32 where",
    bfloat16: "cast it to float32 where",
    float64: "cast it to float32 (losing precision)",
    complex64: "split it into two float32 tensors (real and imaginary parts)",
  };
  for (const [name, cast] of Object.entries(casts)) {
    assert.ok(refusal(() => tfjsTypeOf(parseDType(name))).message.includes(cast), name);
  }
});

test("TF.js → webdlpack: complex64 and string are refused with what to hand over instead", () => {
  const complex = refusal(() => dtypeOfTfjs("complex64"));
  assert.equal(complex.field, "tf.Tensor.dtype");
  assert.match(complex.message, /takes TF\.js float32, int32 and bool\. Hand over tf\.real\(x\) and tf\.imag\(x\)/);
  assert.match(refusal(() => dtypeOfTfjs("string")).message, /encode it as numbers first/);
  assert.match(refusal(() => dtypeOfTfjs("int64")).message, /tf\.cast\(x, 'int32'\)/);
});

test("webdlpack → ONNX Runtime Web: a bfloat16 tensor is refused naming the types ORT takes", () => {
  const err = refusal(() => ortTypeOf(parseDType("bfloat16")));
  assert.equal(err.code, "UNSUPPORTED");
  assert.equal(err.field, "dtype");
  assert.equal(err.value, "bfloat16");
  assert.match(err.message, /ONNX Runtime Web has no tensor type for webdlpack dtype bfloat16; it takes .*float32/);
  assert.doesNotMatch(err.message, /\?/);
});
