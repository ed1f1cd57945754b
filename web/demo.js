// The demo page: loads everything (load.js), runs the exchange on a click or
// with `?auto=1` (exchange.js), and keeps the allocation panel live (panel.js).
// The result is left in `window.demoResult` (scripts/demo.mjs prints it; the
// browser test checks it against what the page shows).
import { loadEverything } from "./load.js";
import { runExchange } from "./exchange.js";
import { leakOne, panelSnapshot, startPanel } from "./panel.js";

const $ = (sel) => document.querySelector(sel);

/** Draw the step table. */
function renderSteps(steps) {
  $("#steps tbody").innerHTML = steps
    .map((s) => `<tr data-step="${s.index}"><td>${s.index}</td><td>${s.name}<br><small>${s.detail}</small></td><td class="device">${s.device}</td>` +
      `<td class="pointer">${s.pointer}</td><td class="bytes">${s.bytes}</td><td class="copy">${s.copy ? "copy" : "zero-copy"}</td>` +
      `<td class="time">${s.ms.toFixed(2)} ms</td><td class="live">${s.liveEntries}</td><td class="values">${s.values}</td></tr>`)
    .join("");
}

/** Show a loading failure, with what to do about it. */
function showProblem(err) {
  const text = `${err.code ? `[${err.code}] ` : ""}${err.message}`;
  $("#error-panel").hidden = false;
  $("#error-text").textContent = text;
  $("#error-advice").textContent = err.advice ?? "";
  window.demoResult = { error: text, advice: err.advice ?? null };
}

async function main() {
  let env;
  try {
    env = await loadEverything();
  } catch (err) {
    showProblem(err);
    return;
  }
  $("#device-panel").hidden = false;
  $("#device-info").textContent = JSON.stringify(env.deviceInfo, null, 2);
  const refreshPanel = startPanel(env.ctx);
  const run = async () => {
    $("#run").disabled = true;
    try {
      const result = await runExchange(env, (steps) => { renderSteps(steps); refreshPanel(); });
      $("#verdict").textContent = result.verdict;
      $("#verdict").className = result.ok ? "ok" : "bad";
      window.demoResult = { ...result, device: env.deviceInfo, load: env.load, panel: refreshPanel() };
    } catch (err) {
      $("#verdict").textContent = `error: ${err.message}`;
      $("#verdict").className = "bad";
      window.demoResult = { error: err.message, device: env.deviceInfo, load: env.load };
    } finally {
      $("#run").disabled = false;
    }
  };
  $("#leak").addEventListener("click", async () => {
    const ptr = await leakOne(env.ctx);
    refreshPanel();
    $("#leak-note").textContent = `GPU pointer 0x${ptr.toString(16)} is held only by an object the page dropped; ` +
      "the leak shows up below once the garbage collector runs (the safety net then frees the buffer).";
  });
  window.demoPanel = () => panelSnapshot(env.ctx);
  $("#run").disabled = false;
  $("#leak").disabled = false;
  $("#run").addEventListener("click", run);
  if (new URLSearchParams(location.search).get("auto") === "1") await run();
}

main();
