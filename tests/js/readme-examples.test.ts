/**
 * The README shows the files of examples/ verbatim: each block marked
 * `<!-- example: examples/NAME -->` is exactly that file, in the fence language
 * of its extension, inside the section it belongs to; every file in examples/ is
 * shown once. tests/c/test_example.c and tests/browser/readme-examples.spec.ts
 * run the files, so what the README shows is what the tests run.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { test } from "node:test";
import { repoRoot } from "./helpers.js";

const ROOT = repoRoot();
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** Fence language the README must use for each example file extension. */
const LANGUAGE: Record<string, string> = { ".py": "python", ".mjs": "js", ".c": "c" };

/** Which README section (its `## ` heading) shows which example. */
const SECTION_OF: Record<string, string> = {
  "examples/python_in_pyodide.mjs": "## Python in Pyodide",
  "examples/python_in_pyodide.py": "## Python in Pyodide",
  "examples/js_ort_tfjs.mjs": "## JS with ONNX Runtime Web and TensorFlow.js",
  "examples/transformers_pipeline.mjs": "## Transformers.js and LiteRT.js on the same device",
  "examples/c_webgpu_tensor.c": "## C compiled to wasm",
};

/** One marked block of the README: the file it names, its fence language, its text, its section. */
interface MarkedBlock {
  path: string;
  language: string;
  body: string;
  section: string;
}

/** Every `<!-- example: PATH -->` marker with the fenced block right after it. */
function markedBlocks(markdown: string): MarkedBlock[] {
  const re = /^<!-- example: (?<path>\S+) -->\n```(?<language>[a-z]*)\n(?<body>[\s\S]*?)\n```$/gm;
  return [...markdown.matchAll(re)].map((m) => {
    const before = markdown.slice(0, m.index);
    const headings = [...before.matchAll(/^## .*$/gm)];
    return {
      path: m.groups!["path"]!,
      language: m.groups!["language"]!,
      body: m.groups!["body"]!,
      section: headings.length > 0 ? headings[headings.length - 1]![0] : "",
    };
  });
}

const blocks = markedBlocks(README);

test("every marker is followed by its fenced block (no marker without one)", () => {
  const markers = [...README.matchAll(/<!-- example: (\S+) -->/g)].map((m) => m[1]);
  assert.deepEqual(
    blocks.map((b) => b.path),
    markers,
  );
});

test("every file in examples/ is shown exactly once, and nothing else is", () => {
  const files = readdirSync(join(ROOT, "examples"))
    .map((f) => `examples/${f}`)
    .sort();
  assert.deepEqual(blocks.map((b) => b.path).sort(), files);
  assert.deepEqual(Object.keys(SECTION_OF).sort(), files);
});

for (const [path, section] of Object.entries(SECTION_OF)) {
  test(`README block for ${path} is the file verbatim, in its section and language`, () => {
    const block = blocks.find((b) => b.path === path);
    assert.ok(block, `README has no <!-- example: ${path} --> block`);
    assert.ok(block.section.startsWith(section), `${path} is under "${block.section}", not "${section}"`);
    assert.equal(block.language, LANGUAGE[extname(path)]);
    const file = readFileSync(join(ROOT, path), "utf8");
    assert.ok(file.endsWith("\n") && !file.endsWith("\n\n"), `${path} must end with exactly one newline`);
    assert.equal(block.body, file.slice(0, -1));
  });
}
