/** Columns of numbers in typed arrays, grown as rows are added (doctor's chat turns, a snapshot's packed records). */

/** `a`, or a copy of it at least `n` long (twice as long, as many times as it takes). */
export function grownTo<A extends Float64Array | Int32Array>(a: A, n: number, make: (n: number) => A): A {
  if (n <= a.length) return a
  let size = Math.max(1, a.length) * 2
  while (size < n) size *= 2
  const b = make(size)
  b.set(a)
  return b
}
