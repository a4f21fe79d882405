/**
 * The pixel size of a PNG or JPEG, read from its header (IHDR / SOFn), so a
 * screenshot reports the size of the image actually produced rather than the
 * size that was asked for.
 */

export function imageSize(data: Uint8Array): { width: number; height: number } | undefined {
  const b = data;
  const u16 = (i: number) => ((b[i] as number) << 8) | (b[i + 1] as number);
  const u32 = (i: number) => u16(i) * 65536 + u16(i + 2);
  // PNG: 8-byte signature, then the IHDR chunk (length, "IHDR", width, height).
  if (b.length >= 24 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 && b[12] === 0x49 && b[13] === 0x48 && b[14] === 0x44 && b[15] === 0x52) {
    return { width: u32(16), height: u32(20) };
  }
  // JPEG: walk the marker segments to the first start-of-frame.
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    let i = 2;
    while (i + 9 < b.length) {
      if (b[i] !== 0xff) return undefined;
      const marker = b[i + 1] as number;
      if (marker === 0xff) { i++; continue; }
      if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) { i += 2; continue; }
      const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
      if (isSof) return { height: u16(i + 5), width: u16(i + 7) };
      i += 2 + u16(i + 2);
    }
  }
  return undefined;
}
