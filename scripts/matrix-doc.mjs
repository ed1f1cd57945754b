/**
 * How `make test-matrix` rewrites docs/test-matrix.md after a rerun of some rows (`--only`): the fresh rows replace
 * the rows of the same package and version, every other row is kept as it was, rows the doc did not have are added
 * at the end, and the run notes ("Full run …", "Rerun …") keep their history with this rerun's note last.
 */

/** A table row's first two cells ("| package | version (installed as)"): the key a rerun replaces it by. */
export const rowKey = (line) => line.split(" | ").slice(0, 2).join(" | ");

/**
 * The table rows and run notes after a rerun: `oldDoc` is the doc's text, `fresh` the rerun's row lines,
 * `note` the rerun's own note. Returns `{rows, notes}` (the header is the caller's).
 */
export function mergeRerun(oldDoc, fresh, note) {
  const old = oldDoc.split("\n");
  const kept = old.filter((l) => /^\| [^-]/.test(l) && !l.startsWith("| package |"));
  const byKey = new Map(fresh.map((l) => [rowKey(l), l]));
  const rows = kept.map((l) => byKey.get(rowKey(l)) ?? l);
  for (const l of fresh) if (!kept.some((k) => rowKey(k) === rowKey(l))) rows.push(l);
  const notes = [...old.filter((l) => /^(Full run|Rerun) /.test(l)), note];
  return { rows, notes };
}
