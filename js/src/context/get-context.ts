/**
 * `getContext()`: the page's one {@link WebDLPackContext}, made on first call.
 */
import { PageContext } from "./context.js";
import { claimSharedContext } from "./global.js";
import type { ContextProtocol, WebDLPackContext } from "./types.js";

/**
 * The protocol this copy of webdlpack speaks. Bump `minor` when methods are
 * added to {@link WebDLPackContext}, `major` when one is removed or changes meaning.
 */
export const CONTEXT_PROTOCOL: ContextProtocol = Object.freeze({ major: 1, minor: 1 });

/**
 * The page-wide context, created on first call and shared by every copy of
 * webdlpack with the same protocol major. Throws INCOMPATIBLE_CONTEXT when the
 * page's context was made by a copy with another major.
 */
export function getContext(): WebDLPackContext {
  return claimSharedContext<WebDLPackContext>(CONTEXT_PROTOCOL, () => new PageContext(CONTEXT_PROTOCOL));
}
