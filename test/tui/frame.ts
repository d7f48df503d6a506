/** ink-testing-library frames without colours. */
export function strip(frame: string | undefined): string {
  // eslint-disable-next-line no-control-regex
  return (frame ?? '').replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '')
}
