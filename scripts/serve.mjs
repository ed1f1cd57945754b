#!/usr/bin/env node
/**
 * A static file server for the repository, bound to loopback only.
 *
 * Used by the browser tests (through playwright.config.mjs), the demo and
 * `make serve`. WebGPU needs a secure context, which http://127.0.0.1 is.
 * `GET /__health` answers 200 so a runner can wait for the server.
 *
 *   node scripts/serve.mjs [--port N] [--root DIR] [--isolated]
 *
 * --isolated adds COOP/COEP headers (cross-origin isolation, SharedArrayBuffer) to every response.
 * Without it, the route `/__isolated/<path>` serves `<path>` with those headers: a page opened there (and
 * every module, worker and file it loads by a relative URL) is cross-origin isolated, the rest of the
 * server is not — so one test run has both kinds of page.
 *
 * $WEBDLPACK_PACKAGES ("name=alias,..."; `make test-matrix` sets it) serves `/node_modules/<alias>/` at
 * `/node_modules/<name>/`: the pages, the demo and the tests then load another version of a package
 * (package.json pins each as an npm alias, e.g. "pyodide-0-27": "npm:pyodide@0.27.8") without a change.
 */
import { createServer } from "node:http";
import { createReadStream, statSync } from "node:fs";
import { extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".map": "application/json",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".zip": "application/zip",
  ".whl": "application/zip",
  ".so": "application/octet-stream",
  ".css": "text/css; charset=utf-8",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".onnx": "application/octet-stream",
  ".txt": "text/plain; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
};

/** The route prefix whose responses carry COOP/COEP headers (see the module comment). */
export const ISOLATED_PREFIX = "/__isolated";

/**
 * Parse "name=alias,..." ($WEBDLPACK_PACKAGES) into [prefix, replacement] pairs of URL paths.
 * @param {string | undefined} text
 * @returns {[string, string][]}
 */
export function packageAliases(text) {
  const pairs = [];
  for (const item of (text ?? "").split(",").filter((x) => x.trim() !== "")) {
    const [name, alias] = item.split("=").map((x) => x.trim());
    if (!name || !alias || alias.includes("..") || name.includes("..")) {
      throw new Error(`webdlpack serve: bad WEBDLPACK_PACKAGES entry "${item}" (expected name=alias)`);
    }
    pairs.push([`/node_modules/${name}/`, `/node_modules/${alias}/`]);
  }
  return pairs;
}

/**
 * Start the server.
 * @param {{root?: string, port?: number, isolated?: boolean, quiet?: boolean, packages?: string}} [options]
 * @returns {Promise<{url: string, port: number, close: () => Promise<void>}>}
 */
export async function startServer(options = {}) {
  const root = resolve(options.root ?? join(fileURLToPath(import.meta.url), "..", ".."));
  const aliases = packageAliases(options.packages ?? process.env.WEBDLPACK_PACKAGES);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname === "/__health") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("ok");
      return;
    }
    const isolatedRoute = url.pathname.startsWith(`${ISOLATED_PREFIX}/`);
    let pathname = isolatedRoute ? url.pathname.slice(ISOLATED_PREFIX.length) : url.pathname;
    for (const [prefix, replacement] of aliases) {
      if (pathname.startsWith(prefix)) pathname = replacement + pathname.slice(prefix.length);
    }
    let path = normalize(join(root, decodeURIComponent(pathname)));
    if (path !== root && !path.startsWith(root + sep)) {
      res.writeHead(403);
      res.end("forbidden");
      return;
    }
    try {
      if (statSync(path).isDirectory()) path = join(path, "index.html");
      const { size, mtimeMs } = statSync(path);
      // Cacheable, but every use asks again (no-cache): a rebuilt file is always served new, an unchanged one is a
      // 304 and the browser keeps its compiled code (the browser tests share one context per worker for this).
      const etag = `"${size.toString(16)}-${Math.floor(mtimeMs).toString(16)}"`;
      const headers = {
        "content-type": MIME[extname(path)] ?? "application/octet-stream",
        "content-length": String(size),
        "cache-control": "no-cache",
        etag,
      };
      if (options.isolated || isolatedRoute) {
        headers["cross-origin-opener-policy"] = "same-origin";
        headers["cross-origin-embedder-policy"] = "require-corp";
      }
      if (req.headers["if-none-match"] === etag) {
        delete headers["content-length"];
        res.writeHead(304, headers);
        res.end();
        return;
      }
      res.writeHead(200, headers);
      createReadStream(path).pipe(res);
    } catch {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end(`not found: ${url.pathname}`);
    }
  });
  await new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(options.port ?? 0, "127.0.0.1", () => ok(undefined));
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  if (!options.quiet) {
    const served = aliases.map(([p, r]) => `${p} from ${r}`).join(", ");
    console.log(`webdlpack: serving ${root} at ${url}/ (loopback only)${served ? `; ${served}` : ""}`);
  }
  return {
    url,
    port,
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections?.();
        server.close(() => ok());
      }),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const value = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  await startServer({
    port: Number(value("--port") ?? process.env.WEBDLPACK_PORT ?? 8765),
    root: value("--root"),
    isolated: args.includes("--isolated"),
  });
}
