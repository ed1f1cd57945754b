/**
 * What the real-model specs and the bench share, in the page: deterministic inputs made by formula (no image
 * files), and each model run the framework's own way — on a GPUDevice the framework made itself — for the
 * reference the shared-device run is compared with. Models come from build/real-models (make real-models).
 */
const BASE = "/build/real-models";

/** An RGB test picture `h`×`w`×3 (values 0..255, int): a bright disc and bars on a gradient, by formula. */
function picture(h, w) {
  const out = new Int32Array(h * w * 3);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const dx = x - w * 0.5;
      const dy = y - h * 0.4;
      const disc = dx * dx + dy * dy < (h * 0.15) ** 2;
      const bar = Math.floor(x / (w / 8)) % 2 === 0 && y > h * 0.6;
      const i = (y * w + x) * 3;
      out[i] = disc ? 240 : bar ? 30 : Math.floor((255 * x) / w);
      out[i + 1] = disc ? 200 : bar ? 30 : Math.floor((255 * y) / h);
      out[i + 2] = disc ? 180 : bar ? 200 : 128;
    }
  return out;
}

/** A text-like picture for the OCR detector, NCHW float32 normalised as PP-OCR does ((v/255 - 0.5) / 0.5). */
function ocrInput(h, w) {
  const out = new Float32Array(3 * h * w);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      // Three "lines of text": short dark strokes on white, in rows.
      const row = Math.floor(y / 32);
      const inLine = row % 2 === 1 && y % 32 > 8 && y % 32 < 24 && x > 16 && x < w - 16 * (row + 1);
      const stroke = inLine && x % 12 < 7 && (x * 7 + y * 3) % 11 !== 0;
      const v = stroke ? 20 : 245;
      for (let c = 0; c < 3; c++) out[c * h * w + y * w + x] = (v / 255 - 0.5) / 0.5;
    }
  return out;
}

/** A 16 kHz audio chunk for the VAD (512 samples): a voiced-like mix of tones, by formula. */
function audioChunk(n, phase) {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const t = (i + phase) / 16000;
    out[i] =
      0.3 * Math.sin(2 * Math.PI * 220 * t) +
      0.2 * Math.sin(2 * Math.PI * 440 * t) +
      0.05 * Math.sin(2 * Math.PI * 1330 * t);
  }
  return out;
}

async function bytes(path) {
  return new Uint8Array(await (await fetch(`${BASE}/${path}`)).arrayBuffer());
}

/** MoveNet on TF.js's own WebGPU device (TF.js's stock "webgpu" backend): keypoints as a Float32Array. */
async function movenetOwn(tf, tfconv, image) {
  await tf.setBackend("webgpu");
  const model = await tfconv.loadGraphModel(`${BASE}/movenet/model.json`);
  try {
    const x = tf.tensor(image, [1, 192, 192, 3], "int32");
    const y = model.predict(x);
    const values = await y.data();
    x.dispose();
    y.dispose();
    return values;
  } finally {
    model.dispose();
  }
}

/**
 * `runs` runs of an ORT model on ORT's own WebGPU device (no device in the options). `feeds`: name →
 * [values, dims] (float32); `chain`: output name → the input it feeds on the next run. Returns each run's
 * outputs as { dims, data } with plain arrays.
 */
async function ortOwnRuns(ort, path, feeds, runs, chain) {
  const session = await ort.InferenceSession.create(await bytes(path), { executionProviders: ["webgpu"] });
  const inputs = Object.fromEntries(
    Object.entries(feeds).map(([k, [data, dims]]) => [k, new ort.Tensor("float32", Float32Array.from(data), dims)]),
  );
  const results = [];
  try {
    for (let run = 0; run < runs; run++) {
      const out = await session.run(inputs);
      const result = {};
      for (const [k, t] of Object.entries(out)) {
        const data = await t.getData();
        result[k] = { dims: [...t.dims], data: Array.from(data) };
        if (chain[k] !== undefined) inputs[chain[k]] = new ort.Tensor("float32", Float32Array.from(data), t.dims);
        t.dispose();
      }
      results.push(result);
    }
    return results;
  } finally {
    await session.release();
  }
}

export const realModels = Object.freeze({ picture, ocrInput, audioChunk, bytes, movenetOwn, ortOwnRuns });
