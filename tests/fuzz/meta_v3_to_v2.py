#!/usr/bin/env python3
# meta_v3_to_v2.py IN OUT [REENCODE] — rewrites a ballarus profile whose
# metadata blobs are version 3 (body after the names block deflated) into
# the profile a build before metadata compression would have written:
# profile version 2 (a version 4 input's record checks recomputed word by
# word), version 2 blobs
# (the body inflated), their headers (version, size, stamp), the record
# headers (meta_size, check), the record order (by stamp), the file check
# and the header check recomputed (runtime/ballarus_format.h).  Made the
# corpus's v2-*.profile from its v3-*.profile, which ballarus 3 wrote from
# tests/programs (loops, setjmp_longjmp, exceptions, templates, shared_lib,
# fork_vfork) and tests/reports/hot.c; `ballarus-reconstruct show` prints
# the same for each pair but the file name.  Version 4 blobs (deltas) are
# first written as version 3 by REENCODE (tests/meta_reencode).
import struct, subprocess, sys, zlib
M = 0x9e3779b97f4a7c15; MASK = (1 << 64) - 1
def h64(data, h=0xcbf29ce484222325):
    n = len(data) // 8
    for i in range(n):
        w, = struct.unpack_from('<Q', data, 8 * i)
        h = ((h ^ w) * M) & MASK; h ^= h >> 32
    for b in data[8 * n:]:
        h = ((h ^ b) * M) & MASK; h ^= h >> 32
    return h
def uvar(d, p):
    v = s = 0
    while True:
        b = d[p]; p += 1; v |= (b & 0x7f) << s; s += 7
        if not b & 0x80: return v, p
src, dst = sys.argv[1], sys.argv[2]
reencode = sys.argv[3] if len(sys.argv) > 3 else None
d = open(src, 'rb').read()
magic, ver, nrec, runs = struct.unpack_from('<8sIIQ', d, 0)
assert magic == b'BLRSPROF' and ver in (2, 4)
ver = 2
off = 40; recs = []
for i in range(nrec):
    tag, fl, stamp, msize, nc, ns, rruns, chk = struct.unpack_from('<IIQQQQQQ', d, off)
    m = d[off + 56: off + 56 + msize]
    tail_at = off + 56 + (msize + 7) // 8 * 8
    tail = d[tail_at: tail_at + 8 * nc + 24 * ns]
    off = tail_at + len(tail)
    mver, = struct.unpack_from('<I', m, 8)
    if mver == 4:
        assert reencode, 'version 4 metadata: REENCODE needed'
        m = subprocess.run([reencode, '3'], input=m, stdout=subprocess.PIPE,
                           check=True).stdout
        mver, = struct.unpack_from('<I', m, 8)
    if mver == 3:
        names, = struct.unpack_from('<I', m, 52)
        body_at = 56 + names
        raw_size, p = uvar(m, body_at)
        raw = zlib.decompress(m[p:])
        assert len(raw) == raw_size
        body = m[56:body_at] + raw
        hdr = bytearray(m[:56])
        struct.pack_into('<I', hdr, 8, 2)
        stamp = h64(body)
        struct.pack_into('<Q', hdr, 16, stamp)
        struct.pack_into('<Q', hdr, 24, 56 + len(body))
        m = bytes(hdr) + body
        msize = len(m)
    rh = struct.pack('<IIQQQQQ', tag, fl, stamp, msize, nc, ns, rruns)
    chk = h64(rh + m[:56] + tail)
    recs.append((rh + struct.pack('<Q', chk), m, tail, chk, stamp))
assert off == len(d)
recs.sort(key=lambda r: r[4])
fc = h64(b''.join(struct.pack('<QQ', c, s) for _, _, _, c, s in recs))
head = struct.pack('<8sIIQQ', magic, ver, nrec, runs, fc)
out = head + struct.pack('<Q', h64(head))
for rh, m, tail, _, _ in recs:
    out += rh + m + b'\0' * ((-len(m)) % 8) + tail
open(dst, 'wb').write(out)
