#!/usr/bin/env python3
"""Count the SASS instructions of a GEMM kernel's main loop in a sm_90 cubin, without a GPU
or a disassembler (this toolchain has ptxas and nvcc but not cuobjdump/nvdisasm).

Usage: python3 bench/sass-loop.py KERNEL.cubin
  (make the cubin with `ptxas -arch=sm_90 -o k.cubin k.ptx` or `nvcc -O3 -arch=sm_90 -cubin`)

An instruction is 16 bytes; its low 12 bits name the opcode class. The table below was read off
`cuobjdump -sass` listings of gemm_mma's two kernels on the H200 (bench/results/
gemm_mma-swizzle-2026-12-01.md); classes not in it print as hex. The main loop is taken from
three instructions before the last DEPBAR (cp.async.wait_group) to the first BRA after the last
HMMA, which is where the loop's back-edge points in those listings: a heuristic for loops of
that shape, not a general disassembler.
"""
import collections
import struct
import sys

OPS = {
    0x202: "MOV", 0x207: "SEL", 0x20C: "ISETP", 0x210: "IADD3", 0x211: "LEA", 0x213: "IABS",
    0x224: "IMAD", 0x225: "IMAD", 0x227: "IMAD", 0x23C: "HMMA", 0x291: "ULEA", 0x305: "F2I",
    0x308: "MUFU", 0x424: "IMAD", 0x805: "CS2R", 0x80C: "ISETP", 0x810: "IADD3", 0x811: "LEA",
    0x812: "LOP3", 0x819: "SHF", 0x824: "IMAD", 0x825: "IMAD", 0x836: "VIADD", 0x83B: "LDSM",
    0x882: "UMOV", 0x890: "UIADD3", 0x899: "USHF", 0x906: "I2F", 0x918: "NOP", 0x919: "S2R",
    0x91A: "DEPBAR", 0x947: "BRA", 0x94D: "EXIT", 0x984: "LDS", 0x986: "STG", 0x9AF: "LDGDEPBAR",
    0x9C3: "S2UR", 0xAB9: "ULDC", 0xB1D: "BAR", 0xB82: "LDC", 0xC10: "IADD3", 0xC11: "LEA",
    0xC24: "IMAD", 0xC25: "IMAD", 0xC36: "VIADD", 0xFAE: "LDGSTS",
}


def text_section(path):
    d = open(path, "rb").read()
    shoff = struct.unpack_from("<Q", d, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
    secs = [struct.unpack_from("<IIQQQQ", d, shoff + i * shentsize) for i in range(shnum)]
    names = secs[shstrndx][4]
    for name, _t, _f, _a, off, size in secs:
        n = d[names + name : d.index(b"\0", names + name)].decode()
        if n.startswith(".text."):
            return d[off : off + size]
    raise SystemExit(f"{path}: no .text section")


def main():
    t = text_section(sys.argv[1])
    ops = [OPS.get(int.from_bytes(t[i : i + 16], "little") & 0xFFF) or hex(t[i] | (t[i + 1] & 0xF) << 8)
           for i in range(0, len(t), 16)]
    hmma = [i for i, o in enumerate(ops) if o == "HMMA"]
    dep = [i for i, o in enumerate(ops) if o == "DEPBAR"]
    bra = [i for i, o in enumerate(ops) if o == "BRA" and hmma and i > hmma[-1]]
    if not hmma or not dep or not bra:
        raise SystemExit("no HMMA main loop found")
    loop = ops[dep[-1] - 3 : bra[0] + 1]
    print(f"{sys.argv[1]}: {len(ops)} instructions, main loop {len(loop)}")
    print(", ".join(f"{k} {v}" for k, v in collections.Counter(loop).most_common()))


if __name__ == "__main__":
    main()
