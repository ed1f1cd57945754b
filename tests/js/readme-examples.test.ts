/**
 * The README shows the files of examples/ verbatim: each block marked
 * `<!-- example: examples/NAME -->` is exactly that file, in the fence language
 * of its extension, inside the section it belongs to; every file in examples/ is
 * shown once. tests/c/test_example.c and tests/browser/readme-examples.spec.ts
 * run the files, so what the README shows is what the tests run. The same holds
 * for docs/python-only.md and examples/python_only/ (run by
 * tests/browser/python-only-*.spec.ts).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { test } from "node:test";
import { repoRoot } from "./helpers.js";

const ROOT = repoRoot();
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** Fence language the README must use for each example file extension. */
const LANGUAGE: Record<string, string> = {
  ".py": "python",
  ".ipy": "python",
  ".mjs": "js",
  ".c": "c",
  ".html": "html",
  ".json": "json",
};

/** Which README section (its `## ` heading) shows which example. */
const SECTION_OF: Record<string, string> = {
  "examples/quickstart.py": "## Python quick start",
  "examples/python_in_pyodide.mjs": "## Python in Pyodide",
  "examples/python_in_pyodide.py": "## Python in Pyodide",
  "examples/js_ort_tfjs.mjs": "## JS quick start",
  "examples/transformers_pipeline.mjs": "## Transformers.js and LiteRT.js on the same device",
  "examples/c_webgpu_tensor.c": "## C compiled to wasm",
};

/** docs/python-only.md: which of its sections shows which file of examples/python_only/. */
const PYTHON_ONLY_SECTION_OF: Record<string, string> = {
  "examples/python_only/ort_on_gpu.py": "## The Python",
  "examples/python_only/tfjs_on_gpu.py": "## TensorFlow.js",
  "examples/python_only/text_detection.py": "## A pretrained model",
  "examples/python_only/pyscript.html": "## PyScript",
  "examples/python_only/pyscript-worker.html": "## PyScript",
  "examples/python_only/jupyter-lite.json": "## JupyterLite",
  "examples/python_only/pip-install.ipy": "## JupyterLite",
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

/** The files (not folders) directly in `dir`, as repo paths, sorted. */
function filesIn(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => `${dir}/${e.name}`)
    .sort();
}

const pythonOnlyBlocks = markedBlocks(readFileSync(join(ROOT, "docs/python-only.md"), "utf8"));

test("every file in examples/ is shown exactly once, and nothing else is", () => {
  const files = filesIn("examples");
  assert.deepEqual(blocks.map((b) => b.path).sort(), files);
  assert.deepEqual(Object.keys(SECTION_OF).sort(), files);
});

test("every file in examples/python_only/ is shown exactly once in docs/python-only.md, and nothing else is", () => {
  const files = filesIn("examples/python_only");
  assert.deepEqual(pythonOnlyBlocks.map((b) => b.path).sort(), files);
  assert.deepEqual(Object.keys(PYTHON_ONLY_SECTION_OF).sort(), files);
});

for (const [doc, docBlocks, sections] of [
  ["README", blocks, SECTION_OF],
  ["docs/python-only.md", pythonOnlyBlocks, PYTHON_ONLY_SECTION_OF],
] as const) {
  for (const [path, section] of Object.entries(sections)) {
    test(`${doc} block for ${path} is the file verbatim, in its section and language`, () => {
      checkBlock(doc, docBlocks, path, section);
    });
  }
}

/** `path`'s block in `doc` is the file verbatim, under `section`, in the fence language of its extension. */
function checkBlock(doc: string, docBlocks: readonly MarkedBlock[], path: string, section: string): void {
  const block = docBlocks.find((b) => b.path === path);
  assert.ok(block, `${doc} has no <!-- example: ${path} --> block`);
  assert.ok(block.section.startsWith(section), `${path} is under "${block.section}", not "${section}"`);
  assert.equal(block.language, LANGUAGE[extname(path)]);
  const file = readFileSync(join(ROOT, path), "utf8");
  assert.ok(file.endsWith("\n") && !file.endsWith("\n\n"), `${path} must end with exactly one newline`);
  assert.equal(block.body, file.slice(0, -1));
}
