// What setup measures on a real WebGPU implementation (Dawn in Node; SwiftShader here, the H100 on the device
// machine) and how uploads and readbacks follow it: both upload ways timed per size, cold and warm; size classes; a
// kept buffer of a larger class serving a smaller request; a class's first upload by its cold way; a class staged in
// measured pieces landing whole at odd lengths and offsets.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { getContext } from "../../js/dist/index.js";
import { DEFAULT_TRANSFER_PLAN, DeviceTransfers } from "../../js/dist/context/transfers/device-transfers.js";
import { ReadRing } from "../../js/dist/context/transfers/staging.js";
import { classStarts, NEW_STAGING_SLACK, uploadClasses } from "../../js/dist/context/transfers/calibrate.js";
import { WARM_MARGIN } from "../../js/dist/context/transfers/calibrate-warm.js";
import { transfersFor } from "../../js/dist/context/transfers/registry.js";
import { bytes, MiB, sameBytes, setUpTracked } from "./transfer-helpers.mjs";

const ctx = getContext();
let device;

before(async () => {
  device = await setUpTracked(ctx);
});

after(() => device.destroy());

describe("measured at setup", () => {
  test("setup measures both upload ways per size, cold and warm, and the plan takes a class per size", () => {
    const stats = ctx.transferStats(0);
    const c = stats.calibration;
    // Largest first, as many sizes as the time budget allowed (a loaded machine measures fewer), at least 16 MiB.
    assert.ok(c && c.upload.length >= 1 && c.upload.at(-1).bytes === 16 * MiB, `figures (${JSON.stringify(c)})`);
    for (const u of c.upload) {
      for (const k of ["writeBufferCold", "stagingCold", "writeBuffer", "staging"])
        assert.ok(u[k] > 0 && Number.isFinite(u[k]), `${k} at ${u.bytes}`);
      // Each decision follows its own figures: warm by the fastest staging way (whole, or in smaller pieces where
      // they beat it by WARM_MARGIN) only where it is WARM_MARGIN times faster than writeBuffer, in the pieces that
      // won; cold where staging won by twice, or at all where the class stages warm (calibrate.ts coldWay).
      const ways = [{ staging: u.staging, pieceBytes: 0 }, ...u.pieces];
      const best = ways.reduce((a, b) => (b.staging * WARM_MARGIN < a.staging ? b : a));
      const warm = best.staging * WARM_MARGIN < u.writeBuffer ? "staging" : "writeBuffer";
      assert.equal(u.warm, warm, `warm at ${u.bytes} (${JSON.stringify(u)})`);
      assert.equal(u.pieceBytes ?? 0, warm === "staging" ? best.pieceBytes : 0, `pieces at ${u.bytes}`);
      const margin = u.warm === "staging" ? 1 : 2;
      assert.equal(
        u.cold,
        margin * u.stagingCold < u.writeBufferCold ? "staging" : "writeBuffer",
        `cold at ${u.bytes}`,
      );
    }
    assert.deepEqual(
      c.upload.map((u) => u.fromBytes),
      classStarts(c.upload.map((u) => u.bytes)),
    );
    assert.equal(
      c.makeStaging,
      c.newStagingMs < NEW_STAGING_SLACK * c.upload.at(-1).writeBufferCold,
      "new staging: at the largest size",
    );
    // Large first readbacks in turns through the ready read staging where new staging cost over twice a GPU copy.
    assert.equal(c.readInTurn, c.newReadMs > 2 * c.snapshotMs, `turns (${c.newReadMs} vs ${c.snapshotMs} ms)`);
    const turnBytes = transfersFor(device).plan.read.turnBytes;
    assert.ok(c.readInTurn ? turnBytes >= 4 * 2 ** 10 : turnBytes === 0, `turnBytes ${turnBytes}`);
    const plan = transfersFor(device).plan.write;
    assert.deepEqual(plan.classes, uploadClasses(c.upload));
    assert.equal(plan.makeStaging, c.makeStaging);
    assert.ok(stats.read.kept >= 1, "read staging is ready before the first readback");
    assert.equal(stats.read.inUse + stats.write.inUse, 0);
  });

  test("classes: each size from the geometric middle below it; none below the first that stages", () => {
    assert.deepEqual(classStarts([64, 256, 1024, 4096]), [64, 128, 512, 2048]);
    const f = (fromBytes, cold, warm) => ({ fromBytes, cold, warm });
    const wb = "writeBuffer";
    const st = "staging";
    assert.deepEqual(uploadClasses([f(64, wb, wb), f(128, wb, st), f(512, wb, wb), f(2048, st, st)]), [
      f(128, wb, st),
      f(512, wb, wb),
      f(2048, st, st),
    ]);
    assert.deepEqual(uploadClasses([f(64, wb, wb), f(128, wb, wb)]), []);
  });

  test("a kept buffer of a larger class (up to 64×) serves a smaller request; a much smaller one gets its own", () => {
    const ring = new ReadRing(device, (b) => b.destroy(), 64 * MiB);
    const big = ring.take(4 * MiB);
    ring.give(big);
    assert.ok(ring.hasReady(64 * 1024));
    assert.equal(ring.take(64 * 1024), big, "64 KiB takes the kept 4 MiB buffer");
    ring.give(big);
    assert.equal(ring.hasReady(1024), false);
    const small = ring.take(1024);
    assert.notEqual(small, big);
    assert.equal(small.size, 1024);
    ring.give(small);
    ring.lose();
  });

  test("a class's first upload takes its cold way, later ones its warm way; staging lacked is made meanwhile", async () => {
    // Cold writeBuffer, warm staging (SwiftShader's measured decision from 16 MiB), nothing made ready.
    const plan = {
      ...DEFAULT_TRANSFER_PLAN,
      write: {
        ...DEFAULT_TRANSFER_PLAN.write,
        classes: [{ fromBytes: MiB, cold: "writeBuffer", warm: "staging" }],
        makeStaging: false,
      },
    };
    const t = new DeviceTransfers(device, "test device", (b) => b.destroy(), plan);
    const ptr = await ctx.allocWebGPUChecked(6 * MiB);
    const paths = [];
    for (const seed of [50, 51, 52]) {
      const src = bytes(6 * MiB + 2, seed).subarray(0, 6 * MiB - 2); // odd length: the last piece is padded
      paths.push(t.write(ctx.gpuPointerToBuffer(ptr), 0, src));
      sameBytes(new Uint8Array(await ctx.readback(ptr, { byteLength: 6 * MiB - 2 })), src, `upload ${seed}`);
      await device.queue.onSubmittedWorkDone();
      await new Promise((resolve) => setTimeout(resolve, 20)); // staging is made once the upload's work is done
    }
    assert.deepEqual(paths, ["writeBuffer", "staging", "staging"]);
    // Below the first class: writeBuffer, cold or warm.
    assert.equal(t.write(ctx.gpuPointerToBuffer(ptr), 0, bytes(4096, 3)), "writeBuffer");
    // Cold staging where nothing is ready and new staging is not made: writeBuffer for the lacking pieces.
    const coldStaging = new DeviceTransfers(device, "test device", (b) => b.destroy(), {
      ...plan,
      write: { ...plan.write, classes: [{ fromBytes: MiB, cold: "staging", warm: "writeBuffer" }] },
    });
    assert.equal(coldStaging.write(ctx.gpuPointerToBuffer(ptr), 0, bytes(2 * MiB, 4)), "writeBuffer");
    assert.equal(coldStaging.write(ctx.gpuPointerToBuffer(ptr), 0, bytes(2 * MiB, 5)), "writeBuffer");
    await device.queue.onSubmittedWorkDone();
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(coldStaging.stats().write.created, 0, "no staging made for a class whose warm way is writeBuffer");
    t.drain();
    coldStaging.drain();
    ctx.freeWebGPU(ptr);
  });
  test("a class staged warm in measured pieces: odd lengths and offsets land whole, the last piece padded", async () => {
    // Pieces of 256 KiB for the class from 512 KiB (Chromium on the H100 measured them faster than one buffer), first
    // upload cold through writeBuffer; later ones in pieces through kept staging, reused.
    const plan = {
      ...DEFAULT_TRANSFER_PLAN,
      write: {
        ...DEFAULT_TRANSFER_PLAN.write,
        classes: [{ fromBytes: 512 * 1024, cold: "writeBuffer", warm: "staging", pieceBytes: 256 * 1024 }],
        makeStaging: true,
      },
    };
    const t = new DeviceTransfers(device, "test device", (b) => b.destroy(), plan);
    const ptr = await ctx.allocWebGPUChecked(2 * MiB + 64);
    const paths = [];
    for (const [n, offset, seed] of [
      [MiB + 3, 4, 60],
      [MiB + 3, 4, 61],
      [600 * 1024 + 1, 1028, 62],
      [2 * MiB - 2, 36, 63],
      [512 * 1024, 0, 64],
    ]) {
      ctx.clearBuffer(ptr);
      const src = bytes(n, seed);
      paths.push(t.write(ctx.gpuPointerToBuffer(ptr), offset, src));
      const got = new Uint8Array(await ctx.readback(ptr, { byteLength: offset + Math.ceil(n / 4) * 4 + 4 }));
      sameBytes(got.subarray(offset, offset + n), src, `${n} B at ${offset}`);
      assert.ok(
        got.subarray(0, offset).every((b) => b === 0) && got.subarray(offset + n).every((b) => b === 0),
        `${n} B at ${offset}: nothing written around it`,
      );
    }
    assert.deepEqual(paths, ["writeBuffer", "staging", "staging", "staging", "staging"]);
    await device.queue.onSubmittedWorkDone();
    await new Promise((resolve) => setTimeout(resolve, 50)); // mapped again in the background
    const w = t.stats().write;
    assert.ok(w.reused > 0 && w.inUse === 0, JSON.stringify(w));
    t.drain();
    ctx.freeWebGPU(ptr);
  });
});
