/**
 * Which tag a context's GPU pointers carry (see pointer-table.ts): every
 * webdlpack context — the page and each Worker — has its own pointer table,
 * and the tag in a pointer's top bits says whose it is.
 *
 * A table starts with a random tag. `setup()` then claims a tag no other live
 * context of the origin holds, through the Web Locks API (pages and workers of
 * one origin share its lock names): the context takes the lock
 * `webdlpack.gpu-pointer-tag.<n>` and holds it for as long as it lives (a lock
 * is released when its realm goes away). With more live contexts than tags, or
 * without Web Locks (Node), the tag stays random: two contexts then share a tag
 * with probability 1 / (2^tagBits - 1).
 */

/** Prefix of the Web Locks names of tags; the tag number follows. */
export const POINTER_TAG_LOCK_PREFIX = "webdlpack.gpu-pointer-tag.";

/** The parts of the Web Locks API used here (`navigator.locks`). */
export interface LockManagerLike {
  query(): Promise<{ held?: { name?: string }[] }>;
  request(name: string, options: { ifAvailable: boolean }, callback: (lock: unknown) => unknown): Promise<unknown>;
}

/** A claimed tag: held until `unlock()` or the end of the realm. */
export interface ClaimedTag {
  readonly tag: number;
  unlock(): void;
}

/** `navigator.locks` when this realm has it. */
function realmLocks(): LockManagerLike | undefined {
  return (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks;
}

/** Take lock `name` if nobody holds it; resolves to its unlock function, or null. */
function tryLock(locks: LockManagerLike, name: string): Promise<(() => void) | null> {
  return new Promise((resolve) => {
    locks
      .request(name, { ifAvailable: true }, (lock) => {
        if (lock === null) {
          resolve(null);
          return undefined;
        }
        return new Promise<void>((release) => resolve(() => release())); // held until released
      })
      .catch(() => resolve(null));
  });
}

/**
 * Claim a tag in 1 .. 2^tagBits - 1 that no other live context of this origin
 * holds. Resolves to null without Web Locks, when every tag is held, or when
 * the lock manager refuses (e.g. an opaque origin).
 */
export async function claimPointerTag(
  tagBits: number,
  locks: LockManagerLike | undefined = realmLocks(),
): Promise<ClaimedTag | null> {
  if (locks === undefined || tagBits === 0) return null;
  let held: Set<string>;
  try {
    held = new Set(((await locks.query()).held ?? []).map((lock) => String(lock.name)));
  } catch {
    return null;
  }
  for (let tag = 1; tag < 2 ** tagBits; tag++) {
    const name = `${POINTER_TAG_LOCK_PREFIX}${tag}`;
    if (held.has(name)) continue;
    const unlock = await tryLock(locks, name);
    if (unlock !== null) return { tag, unlock };
  }
  return null;
}
