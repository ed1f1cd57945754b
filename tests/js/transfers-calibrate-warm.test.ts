/**
 * The warm upload decisions setup makes (transfers/calibrate.ts, calibrate-warm.ts): medians of interleaved rounds,
 * the first round left out, the time box, staging in smaller pieces as a third way, the margin staging must win by,
 * frees paid outside the figures — against scripted fake devices on a virtual clock (calibrate-script.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { pieceCandidates } from "../../js/src/context/transfers/calibrate.js";
import { WARM_MARGIN, warmWay } from "../../js/src/context/transfers/calibrate-warm.js";
import { KiB, MiB, SLOW, type Script, bySize, cycling, near, setUp, useVirtualClock } from "./calibrate-script.js";

useVirtualClock();

test("warm by the medians of interleaved pairs: a way with a wide spread and a fast tail does not win on it", async () => {
  // As Chromium on the H100 at 256 KiB and 1 MiB (warm, ms): writeBuffer's median 0.71–0.82 with its fastest calls
  // at 0.58–0.64, kept staging's median 0.46–0.62 with a narrow spread. Every setup, on whatever noise, must stage
  // there: the fastest of five calls each took writeBuffer in one of two runs (0.580 against 0.620).
  const noisy = (seed: number): Script => {
    // writeBuffer: two calls in eight fast (0.45), one slow (2.0), else 0.8; staging: one in eight 1.5, else 0.6.
    const wb = cycling([0.8, 0.45, 0.8, 0.8, 2, 0.8, 0.45, 0.8], seed);
    const st = cycling([0.6, 0.6, 0.6, 1.5, 0.6, 0.6, 0.6, 0.6], 3 * seed);
    const small = (n: number): boolean => n === MiB || n === 256 * KiB;
    return {
      writeBuffer: (n) => (small(n) ? wb() : n === 16 * MiB ? SLOW : 0),
      staging: (n) => (small(n) ? st() : n === 16 * MiB ? 0 : SLOW),
    };
  };
  for (let seed = 0; seed < 8; seed++) {
    const { calibration } = await setUp(`noisy ${seed}`, noisy(seed));
    for (const n of [256 * KiB, MiB]) {
      const u = calibration.upload.find((f) => f.bytes === n)!;
      assert.equal(u.warm, "staging", `seed ${seed}, ${n} B: ${JSON.stringify(u)}`);
      assert.ok(u.pairs >= 5, `${u.pairs} pairs`);
      assert.ok(near(u.writeBuffer, 0.8) && near(u.staging, 0.6), "the medians");
    }
  }
});

test("warm pairs: the first pair (a buffer's first use) is left out; more pairs while the size's time box lasts", async () => {
  // Staging's first use of its own buffer at 1 MiB is slow (a new buffer: 2 ms); later ones beat writeBuffer.
  let wbCalls = 0;
  const script: Script = {
    writeBuffer: (n) => (n === MiB ? (wbCalls++, 0.5) : n === 16 * MiB ? SLOW : 0),
    staging: (n, uses) => (n === MiB ? (uses === 0 ? 2 : 0.3) : n === 16 * MiB ? 0 : SLOW),
    pieces: (n) => (n === MiB ? 0.4 : SLOW), // dearer than one piece: only the count of rounds matters here
  };
  const { calibration, ways } = await setUp("first use slow", script);
  const u = calibration.upload.find((f) => f.bytes === MiB)!;
  // Cold: the first staged call takes the kept 16 MiB buffer (0.3 ms, not its own new one) against writeBuffer's
  // 0.5; the class stages warm, so any margin makes staging its cold way too (coldWay).
  assert.equal(ways[MiB], "staging/staging");
  assert.ok(near(u.staging, 0.3), `the 2 ms first use is not among the samples (${u.staging})`);
  // 1.2 ms a round (writeBuffer, one piece, pieces of 256 KiB) within the 24 ms box after the 2.9 ms of the round
  // left out: 18 rounds (+ the one left out, + the cold call).
  assert.equal(u.pairs, 18);
  assert.equal(wbCalls, 1 + 19);
  assert.deepEqual(
    u.pieces.map((p) => p.pieceBytes),
    [256 * KiB],
  );
  assert.ok(near(u.pieces[0]!.staging, 0.4));
  assert.equal(u.pieceBytes, 0, "one piece, the faster");
});

test("a staged upload that stalls in one buffer and not in smaller pieces: the class stages warm in those pieces", async () => {
  // As Chromium on the H100 (raw, warm medians, ms): writeBuffer 0.25 / 0.65 / 1.4 at 256 KiB / 1 / 4 MiB; one kept
  // buffer 2.4 / 2.6 / 3.1 (a ~2 ms stall); pieces of 256 KiB 0.50 (1 MiB), of 1 MiB 2.8 (4 MiB: they stall too);
  // pieces of 64 KiB stall at 256 KiB.
  const wb = bySize({ [64 * KiB]: 0.12, [256 * KiB]: 0.25, [MiB]: 0.65, [4 * MiB]: 1.4, [16 * MiB]: SLOW });
  const st = bySize({ [64 * KiB]: 2.2, [256 * KiB]: 2.4, [MiB]: 2.6, [4 * MiB]: 3.1, [16 * MiB]: 0 });
  const inPieces = (n: number, piece: number): number =>
    piece === 256 * KiB ? (n === MiB ? 0.5 : 1.06) : piece === 64 * KiB ? 2.3 : n === 16 * MiB ? 1 : 2.8;
  const { ctx, calibration, ways, device } = await setUp("stall in one buffer", {
    writeBuffer: (n) => wb(n),
    staging: (n) => st(n),
    pieces: inPieces,
  });
  assert.deepEqual(ways, {
    [64 * KiB]: "writeBuffer/writeBuffer",
    [256 * KiB]: "writeBuffer/writeBuffer",
    [MiB]: "writeBuffer/staging",
    [4 * MiB]: "writeBuffer/writeBuffer",
    [16 * MiB]: "staging/staging",
  });
  const byBytes = Object.fromEntries(calibration.upload.map((u) => [u.bytes, u]));
  assert.deepEqual(
    [64 * KiB, 256 * KiB, MiB, 4 * MiB, 16 * MiB].map((n) => byBytes[n]!.pieceBytes),
    [0, 0, 256 * KiB, 0, 0],
    "the pieces where they beat one piece and writeBuffer; 16 MiB: one piece (0 ms) beats 4 MiB pieces",
  );
  assert.deepEqual(
    [64 * KiB, 256 * KiB, MiB, 4 * MiB, 16 * MiB].map((n) => byBytes[n]!.pieces.map((p) => p.pieceBytes)),
    [[], [64 * KiB], [256 * KiB], [MiB], [4 * MiB]],
    "a quarter of each size (in-process plan: one piece up to 256 MiB, so 16 MiB is timed in 4 MiB pieces too)",
  );
  assert.ok(near(byBytes[4 * MiB]!.pieces[0]!.staging, 2.8));
  // A 1 MiB class upload (from 512 KiB): the first (cold) through writeBuffer, later ones staged in copies of
  // 256 KiB — 1 MiB in four, 1.5 MiB - 2 bytes in six (the last padded to a word).
  const ptr = await ctx.allocWebGPUChecked(4 * MiB);
  const upload = (n: number) => {
    ctx.upload(ptr, new Uint8Array(n));
    return [ctx.transferStats().lastUploadPath, device.staged.length];
  };
  const before = device.staged.length;
  assert.deepEqual(upload(MiB), ["writeBuffer", before]);
  await device.queue.onSubmittedWorkDone();
  assert.deepEqual(upload(MiB), ["staging", before]);
  await device.queue.onSubmittedWorkDone();
  assert.deepEqual(device.staged.at(-1), { bytes: MiB, copies: 4, pieceBytes: 256 * KiB });
  assert.deepEqual(upload(1.5 * MiB - 2)[0], "staging");
  await device.queue.onSubmittedWorkDone();
  assert.deepEqual(device.staged.at(-1), { bytes: 1.5 * MiB, copies: 6, pieceBytes: 256 * KiB });
  ctx.freeWebGPU(ptr);
});

test("staging the measurement destroyed is freed before the next size's first call, not in its figure", async () => {
  // As dawn.node on the H100: a staged first call took 2.8–6.4 ms with the frees of the sizes before in it, 0.16–0.9
  // without. Staging 0, writeBuffer 1 ms, a free 2 ms: each size's first call stages, 5 buffers freed between sizes.
  const script: Script = { writeBuffer: (n) => (n === 16 * MiB ? SLOW : 1), staging: () => 0, freeMs: 2 };
  const { calibration, ways } = await setUp("frees at the next tick", script);
  for (const u of calibration.upload) assert.ok(near(u.stagingCold, 0), `${u.bytes} B: ${u.stagingCold} ms`);
  assert.deepEqual(Object.values(ways), Array(5).fill("staging/staging"));
});

test("the smaller pieces timed: the next smaller size setup measures, from 64 KiB, below the plan's pieces", () => {
  const browser = (n: number) => Math.min(n, 4 * MiB); // the plan's pieces up to 16 MiB in a browser
  assert.deepEqual(pieceCandidates(16 * MiB, browser(16 * MiB)), [], "4 MiB: the plan's own pieces");
  assert.deepEqual(pieceCandidates(16 * MiB, 16 * MiB), [4 * MiB], "in-process: one piece, or four");
  assert.deepEqual(pieceCandidates(4 * MiB, browser(4 * MiB)), [MiB]);
  assert.deepEqual(pieceCandidates(MiB, browser(MiB)), [256 * KiB]);
  assert.deepEqual(pieceCandidates(256 * KiB, browser(256 * KiB)), [64 * KiB]);
  assert.deepEqual(pieceCandidates(64 * KiB, browser(64 * KiB)), []);
});

test("warm: staging only where its median beats writeBuffer's by the margin (a near tie keeps writeBuffer)", () => {
  // Chromium on the H100, setup's medians (ms): 4 MiB writeBuffer 1.10, one piece 3.28, 1 MiB pieces 0.995 (10 %
  // faster: lost in the bench, 1.33 against 1.13); 1 MiB writeBuffer 0.693, one piece 2.62, 256 KiB pieces 0.515.
  const nearTie = warmWay(1.1, 3.28, [{ pieceBytes: MiB, staging: 0.995 }]);
  const clearWin = warmWay(0.693, 2.62, [{ pieceBytes: 256 * KiB, staging: 0.515 }]);
  // One piece, by far (Node on the H100 at 16 MiB): staging in the plan's pieces.
  const onePiece = warmWay(13.78, 2.52, [{ pieceBytes: 4 * MiB, staging: 2.97 }]);
  // Just past the margin, and just short of it.
  const past = warmWay(1, 1 / (WARM_MARGIN * 1.01), []);
  const short = warmWay(1, 1 / (WARM_MARGIN * 0.99), []);
  assert.deepEqual(nearTie, { warm: "writeBuffer", pieceBytes: 0 });
  assert.deepEqual(clearWin, { warm: "staging", pieceBytes: 256 * KiB });
  assert.deepEqual(onePiece, { warm: "staging", pieceBytes: 0 });
  assert.equal(past.warm, "staging");
  assert.equal(short.warm, "writeBuffer");
});

test("warm: smaller pieces only where they beat the plan's pieces by the margin (a near tie keeps fewer pieces)", () => {
  // dawn.node on the H200 at 16 MiB: a setup whose few rounds put 4 MiB pieces a little ahead took them, and then
  // ctx.upload took 1.89–2.41 ms against one kept buffer's 1.68–2.01 (bench/results-gpu-upload-split-h200.json).
  const nearTie = warmWay(6.36, 1.57, [{ pieceBytes: 4 * MiB, staging: 1.45 }]);
  // Chromium on the H100 at 1 MiB: 256 KiB pieces 0.515 ms against one piece's 2.62 (the staged-upload stall).
  const farAhead = warmWay(0.693, 2.62, [{ pieceBytes: 256 * KiB, staging: 0.515 }]);
  const past = warmWay(10, 1, [{ pieceBytes: MiB, staging: 1 / (WARM_MARGIN * 1.01) }]);
  const short = warmWay(10, 1, [{ pieceBytes: MiB, staging: 1 / (WARM_MARGIN * 0.99) }]);
  assert.deepEqual(nearTie, { warm: "staging", pieceBytes: 0 });
  assert.deepEqual(farAhead, { warm: "staging", pieceBytes: 256 * KiB });
  assert.equal(past.pieceBytes, MiB);
  assert.equal(short.pieceBytes, 0);
});
