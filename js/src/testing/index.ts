/**
 * Test support, published as the subpath `webdlpack/testing` (not part of the
 * main entry): an in-JS {@link WasmHost} over a growable `WebAssembly.Memory`
 * with its own allocator and function table, for exercising DLPack structs
 * without a C runtime.
 */
export { createTestHost, type TestHost, type TestHostOptions } from "./test-host.js";
