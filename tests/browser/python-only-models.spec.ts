/**
 * A real pretrained model from Python only (examples/python_only/text_detection.py in a PyScript page): PP-OCRv4
 * text detection from the PyPI package rapidocr-onnxruntime (make real-models) runs in ORT-web on the shared
 * device with the input made and the output post-processed by Python; the example asserts it finds both text
 * lines of its picture. Offline: no request leaves 127.0.0.1.
 */
import { expect, test } from "@playwright/test";
import { runExample } from "./python-only-page.js";

const DONE = /webdlpack text detection in (\w+) -> 2 lines at rows/;

test("PyScript, Python only: a pretrained ORT model (PP-OCRv4 text detection) on the shared device, post-processed in Python", async ({
  page,
}) => {
  test.setTimeout(400_000);
  const { line, errors, offsite } = await runExample(
    page,
    "/tests/browser/python-only-tfjs.html?example=text_detection.py",
    DONE,
    380_000,
  );
  expect(line).toMatch(DONE);
  expect(line.match(DONE)![1]).toBe("window");
  expect(errors).toEqual([]);
  expect(offsite).toEqual([]);
});
