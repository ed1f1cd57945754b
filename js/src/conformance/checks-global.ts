/**
 * Checks of the global record (docs/spec.md §1, G1–G5). Each installs what it
 * needs at the key and puts the original property back, exactly, afterwards.
 */
import { CONTEXT_GLOBAL_KEY } from "../context/global.js";
import { CONTEXT_MEMBERS_ADDED, contextMembers } from "../context/get-context.js";
import type { WebDLPackContext } from "../context/types.js";
import type { Check } from "./check.js";
import { CheckSkipped, ensure, ensureCode, expectCode, show } from "./probe.js";
import type { ConformanceTarget } from "./types.js";

const slot = globalThis as unknown as Record<symbol, unknown>;

function needGetContext(target: ConformanceTarget): () => WebDLPackContext {
  if (!target.getContext) throw new CheckSkipped("no getContext given");
  return target.getContext;
}

/** Run `fn` with `value` at the key (or nothing, for undefined), then restore the key. */
async function withRecord<T>(value: unknown, fn: () => T | Promise<T>): Promise<T> {
  const saved = Object.getOwnPropertyDescriptor(globalThis, CONTEXT_GLOBAL_KEY);
  try {
    if (value === undefined) delete slot[CONTEXT_GLOBAL_KEY];
    else
      Object.defineProperty(globalThis, CONTEXT_GLOBAL_KEY, {
        value,
        writable: true,
        configurable: true,
        enumerable: false,
      });
    return await fn();
  } finally {
    if (saved) Object.defineProperty(globalThis, CONTEXT_GLOBAL_KEY, saved);
    else delete slot[CONTEXT_GLOBAL_KEY];
  }
}

/** A stand-in context with the members of protocol `1.minor` except `without` (bound to the real one where it has them). */
function standIn(real: WebDLPackContext, minor: number, without: readonly string[]): object {
  const out: Record<string, unknown> = {};
  const r = real as unknown as Record<string, unknown>;
  for (const name of contextMembers(minor)) {
    if (without.includes(name)) continue;
    const v = r[name];
    out[name] = typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(real) : (v ?? {});
  }
  return out;
}

export const globalChecks: readonly Check[] = [
  {
    name: "global.record",
    rules: ["G1"],
    level: "MUST",
    gpu: false,
    run({ target }) {
      const ctx = needGetContext(target)();
      const desc = Object.getOwnPropertyDescriptor(globalThis, CONTEXT_GLOBAL_KEY);
      ensure(desc !== undefined, 'after getContext() there is no property at Symbol.for("webdlpack.context")');
      ensure(desc.enumerable === false, "the record property must not be enumerable");
      const record = desc.value as { protocol?: { major?: unknown; minor?: unknown }; context?: unknown } | undefined;
      ensure(record !== null && typeof record === "object", `the record must be an object, got ${show(record)}`);
      ensure(Object.isFrozen(record), "the record must be frozen");
      ensure(record.context === ctx, "record.context must be the context getContext() returns");
      const p = record.protocol;
      ensure(
        p && Number.isInteger(p.major) && Number.isInteger(p.minor),
        `record.protocol must be {major, minor} integers, got ${show(p)}`,
      );
      ensure(
        ctx.protocol?.major === p.major && ctx.protocol?.minor === p.minor,
        `context.protocol ${show(ctx.protocol?.major)}.${show(ctx.protocol?.minor)} must equal record.protocol ${show(p.major)}.${show(p.minor)}`,
      );
    },
  },
  {
    name: "global.singleton",
    rules: ["G2"],
    level: "MUST",
    gpu: false,
    async run({ target }) {
      const getContext = needGetContext(target);
      const a = getContext();
      ensure(getContext() === a, "two getContext() calls must return the same context");
      await withRecord(undefined, () => {
        const made = getContext();
        const record = slot[CONTEXT_GLOBAL_KEY] as { context?: unknown } | undefined;
        ensure(record?.context === made, "with no record, getContext() must create the context and store its record");
        ensure(getContext() === made, "the context getContext() stored must be returned by the next call");
      });
    },
  },
  {
    name: "global.major-mismatch",
    rules: ["G3"],
    level: "MUST",
    gpu: false,
    async run({ target }) {
      const getContext = needGetContext(target);
      const mine = getContext().protocol;
      const other = { protocol: Object.freeze({ major: mine.major + 1, minor: 0 }), context: {} };
      await withRecord(Object.freeze(other), () =>
        expectCode(getContext, "INCOMPATIBLE_CONTEXT", `a record of protocol ${mine.major + 1}.0`, "protocol.major"),
      );
    },
  },
  {
    name: "global.older-minor",
    rules: ["G4"],
    level: "MUST",
    gpu: false,
    async run({ target }) {
      const getContext = needGetContext(target);
      const real = getContext();
      const { major, minor } = real.protocol;
      const added = CONTEXT_MEMBERS_ADDED[minor];
      if (minor < 2 || !added)
        throw new CheckSkipped(`protocol ${major}.${minor} has no older minor with a member list`);
      const older = Object.freeze({ major, minor: minor - 1 });
      // An older context lacking what this minor added: refused, every missing member named.
      const lacking = standIn(real, minor, added);
      await withRecord(Object.freeze({ protocol: older, context: lacking }), async () => {
        let caught: unknown;
        try {
          getContext();
        } catch (err) {
          caught = err;
        }
        ensureCode(caught, "INCOMPATIBLE_CONTEXT", `a ${major}.${minor - 1} context without ${added.join(", ")}`);
        const field = String((caught as { field?: unknown }).field);
        for (const name of added)
          ensure(field.includes(name), `the error's field must name the missing member ${name}, got ${show(field)}`);
      });
      // An older context that has them all, and a newer one: accepted as they are.
      const complete = standIn(real, minor, []);
      await withRecord(Object.freeze({ protocol: older, context: complete }), () =>
        ensure(
          getContext() === complete,
          `a ${major}.${minor - 1} context with every ${major}.${minor} member must be used`,
        ),
      );
      const newer = standIn(real, minor, []);
      await withRecord(Object.freeze({ protocol: Object.freeze({ major, minor: minor + 1 }), context: newer }), () =>
        ensure(getContext() === newer, `a ${major}.${minor + 1} context must be used (minors only add members)`),
      );
    },
  },
  {
    name: "global.malformed",
    rules: ["G5"],
    level: "MUST",
    gpu: false,
    async run({ target }) {
      const getContext = needGetContext(target);
      for (const bad of [42, { protocol: "1.2", context: {} }, { protocol: { major: 1, minor: 2 }, context: null }]) {
        await withRecord(bad, async () => {
          await expectCode(getContext, "INCOMPATIBLE_CONTEXT", `the value ${JSON.stringify(bad)} at the key`);
          ensure(slot[CONTEXT_GLOBAL_KEY] === bad, `getContext() must not overwrite ${JSON.stringify(bad)} at the key`);
        });
      }
    },
  },
];
