/**
 * Files webdlpack ships next to its JS (in js/dist/), found relative to this
 * module so they load from the same origin as the library — no CDN.
 * `make js` copies them there: the Python wheel and the C side module.
 */

/** Version of the Python wheel this JS build ships with (kept equal to pyproject.toml by a test). */
export const PYTHON_PACKAGE_VERSION = "0.1.0";

/** File name of the pure-Python wheel. */
export const PYTHON_WHEEL_FILENAME = `webdlpack-${PYTHON_PACKAGE_VERSION}-py3-none-any.whl`;

/** URL of the wheel shipped in js/dist/python/. */
export function defaultWheelURL(): URL {
  return new URL(`./python/${PYTHON_WHEEL_FILENAME}`, import.meta.url);
}

/** URL of the C side module shipped in js/dist/wasm/. */
export function defaultCLibraryURL(): URL {
  return new URL("./wasm/libwebdlpack.so", import.meta.url);
}
