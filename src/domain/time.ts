/** Unix seconds, as the vendor's API sends every timestamp. */
export function toUnix(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

export function toUnixOrUndefined(date: Date | null | undefined): number | undefined {
  return date ? toUnix(date) : undefined;
}
