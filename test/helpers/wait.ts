/** Waiting in tests: a plain sleep, and polling a condition with a bound and a name for the failure. */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

export async function until(cond: () => boolean | Promise<boolean>, ms = 5000, what = 'condition'): Promise<void> {
  const end = performance.now() + ms
  while (!(await cond())) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(5)
  }
}
