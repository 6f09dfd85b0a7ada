#!/usr/bin/env python3
"""Count the pixels of given colours in a PNG (8-bit RGB or RGBA, not interlaced).

  pngcount.py FILE.png RRGGBB [RRGGBB...]

Prints "RRGGBB COUNT" per colour, and "size W H". Needs only the standard library
(zlib), so a test can inspect a browser's screenshot without an imaging package.
"""
import struct
import sys
import zlib


def decode(path):
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        sys.exit('pngcount: %s: not a PNG file' % path)
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b'IHDR':
            hdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat.append(body)
        elif kind == b'IEND':
            break
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        sys.exit('pngcount: %s: colour type %d depth %d interlace %d not supported'
                 % (path, ctype, depth, interlace))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b''.join(idat))
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    i = 0
    for _ in range(h):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + ((a + b) >> 1)) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pr) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    w, h, bpp, rows = decode(sys.argv[1])
    want = {bytes.fromhex(c.lstrip('#')): 0 for c in sys.argv[2:]}
    for line in rows:
        for x in range(0, len(line), bpp):
            px = line[x:x + 3]
            if px in want:
                want[px] += 1
    print('size %d %d' % (w, h))
    for c, n in want.items():
        print('%s %d' % (c.hex(), n))


main()
