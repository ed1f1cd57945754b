/**
 * Short mode of the JS decoder fuzzer (tests/js/fuzz/decoder-fuzz.ts): 5 000
 * random structs, each decoded or refused with a WebDLPackError naming a field;
 * accepted CPU tensors inside memory. `make fuzz` runs the same for minutes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fuzzDecoder } from "./fuzz/decoder-fuzz.js";

test("fuzz (short): 5 000 random managed structs give a valid tensor or a typed error, nothing else", () => {
  const stats = fuzzDecoder({ seed: 20261124, maxCases: 5000 });
  assert.deepEqual(stats.failures, []);
  assert.equal(stats.wrong, 0);
  assert.equal(stats.cases, 5000);
  assert.ok(stats.accepted > 50 && stats.refused > 50, JSON.stringify(stats));
});
