// Units of the benchmark reports, without the browser helpers of lib.mjs (so Node-only scripts can use them).

/** A byte count as "1 KiB" / "16 MiB". */
export function sizeLabel(n) {
  return n >= 2 ** 20 ? `${n / 2 ** 20} MiB` : `${n / 1024} KiB`;
}
