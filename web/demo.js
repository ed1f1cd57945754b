// The demo page: loads everything (load.js), runs the exchange on a click or
// with `?auto=1` (exchange.js), and keeps the allocation panel live (panel.js).
// With `?worker=1` all of that runs inside a dedicated module Worker (worker.js)
// and the page only draws what the worker posts.
// The result is left in `window.demoResult` (scripts/demo.mjs prints it; the
// browser test checks it against what the page shows).
import { loadEverything } from "./load.js";
import { runExchange } from "./exchange.js";
import { leakOne, panelSnapshot, startPanel } from "./panel.js";

const $ = (sel) => document.querySelector(sel);
const params = new URLSearchParams(location.search);
const inWorker = params.get("worker") === "1";

/** Show `text` for one stage of the progress list (`state`: busy, done or failed). */
function showStage(name, state, text) {
  const el = $(`[data-stage="${name}"] .state`);
  el.className = `state ${state}`;
  el.textContent = text;
}

/** Draw the step table. */
function renderSteps(steps) {
  $("#steps tbody").innerHTML = steps
    .map(
      (s) =>
        `<tr data-step="${s.index}"><td>${s.index}</td><td>${s.name}<br><small>${s.detail}</small></td><td class="device">${s.device}</td>` +
        `<td class="pointer">${s.pointer}</td><td class="bytes">${s.bytes}</td><td class="copy">${s.copy ? "copy" : "zero-copy"}</td>` +
        `<td class="time">${s.ms.toFixed(2)} ms</td><td class="live">${s.liveEntries}</td><td class="values">${s.values}</td></tr>`,
    )
    .join("");
}

/** Show a loading failure, with what to do about it. */
function showProblem(err) {
  const text = `${err.code ? `[${err.code}] ` : ""}${err.message}`;
  $("#error-panel").hidden = false;
  $("#error-text").textContent = text;
  $("#error-advice").textContent = err.advice ?? "";
  window.demoResult = { error: text, advice: err.advice ?? null, mode: inWorker ? "worker" : "page" };
}

/** Everything on the page's main thread. */
async function pageSession() {
  const env = await loadEverything({ onStage: showStage });
  return {
    deviceInfo: env.deviceInfo,
    load: env.load,
    run: (onSteps) => runExchange(env, onSteps),
    panel: () => panelSnapshot(env.ctx),
    leak: () => leakOne(env.ctx),
  };
}

/** Everything inside web/worker.js; each method is a request the worker answers. */
async function workerSession() {
  const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
  const waiting = new Map();
  let nextId = 1;
  let onSteps = () => {};
  const request = (type) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      worker.postMessage({ type, id });
    });
  worker.onerror = (e) => {
    for (const { reject } of waiting.values()) reject(new Error(`the demo's worker failed: ${e.message}`));
    waiting.clear();
  };
  worker.onmessage = ({ data }) => {
    if (data.type === "stage") showStage(data.name, data.state, data.text);
    else if (data.type === "steps") onSteps(data.steps);
    else {
      const { resolve, reject } = waiting.get(data.id);
      waiting.delete(data.id);
      if (data.type === "reply") resolve(data.value);
      else reject(Object.assign(new Error(data.error.message), data.error));
    }
  };
  const { deviceInfo, load } = await request("load");
  return {
    deviceInfo,
    load,
    run: (steps) => {
      onSteps = steps;
      return request("run");
    },
    panel: () => request("panel"),
    leak: () => request("leak"),
  };
}

/** The mode line: where this page runs the demo, and a link to the other mode. */
function showMode() {
  $("#mode-text").textContent = inWorker
    ? "Mode: inside a dedicated Web Worker (web/worker.js) — the context, Pyodide, ORT-web and TF.js share one realm there; the page only draws."
    : "Mode: on the page's main thread.";
  const other = new URLSearchParams(params);
  if (inWorker) other.delete("worker");
  else other.set("worker", "1");
  $("#mode-switch").href = `?${other}`;
  $("#mode-switch").textContent = inWorker ? "Run on the page instead" : "Run in a Web Worker";
}

async function main() {
  showMode();
  let session;
  try {
    session = await (inWorker ? workerSession() : pageSession());
  } catch (err) {
    showProblem(err);
    return;
  }
  $("#device-panel").hidden = false;
  $("#device-info").textContent = JSON.stringify(session.deviceInfo, null, 2);
  const refreshPanel = startPanel(session.panel);
  const mode = inWorker ? "worker" : "page";
  const run = async () => {
    $("#run").disabled = true;
    try {
      const result = await session.run((steps) => {
        renderSteps(steps);
        refreshPanel();
      });
      renderSteps(result.steps);
      $("#verdict").textContent = result.verdict;
      $("#verdict").className = result.ok ? "ok" : "bad";
      window.demoResult = {
        ...result,
        mode,
        device: session.deviceInfo,
        load: session.load,
        panel: await refreshPanel(),
      };
    } catch (err) {
      $("#verdict").textContent = `error: ${err.message}`;
      $("#verdict").className = "bad";
      window.demoResult = { error: err.message, mode, device: session.deviceInfo, load: session.load };
    } finally {
      $("#run").disabled = false;
    }
  };
  $("#leak").addEventListener("click", async () => {
    const ptr = await session.leak();
    refreshPanel();
    $("#leak-note").textContent =
      `GPU pointer 0x${ptr.toString(16)} is held only by an object the ${mode} dropped; ` +
      "the leak shows up below once the garbage collector runs (the safety net then frees the buffer).";
  });
  window.demoPanel = () => session.panel();
  $("#run").disabled = false;
  $("#leak").disabled = false;
  $("#run").addEventListener("click", run);
  if (params.get("auto") === "1") await run();
}

main();
