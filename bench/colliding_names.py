#!/usr/bin/env python3
"""File names whose paths all hash alike under libstdc++'s std::hash<std::string>.

That hash is _Hash_bytes: MurmurHash2-64 with the fixed seed 0xc70f6907. Its state
after any prefix is known, and the mixing of one 8-byte block is invertible, so for
each free first block the second block that brings the state back to one target
can be solved for. Every name is PAD + 8 digits + 8 solved bytes + "z" (all the
same length, which the hash mixes in first); a solved block holding a NUL or "/"
is skipped. Prints the names hex-encoded, one per line (they are not text).

  bench/colliding_names.py PREFIX COUNT    PREFIX: the directory as the daemon
                                           names it, relative to the root ("small/")
"""
import sys

MASK = (1 << 64) - 1
MUL = (0xC6A4A793 << 32) + 0x5BD1E995
MUL_INV = pow(MUL, -1, 1 << 64)
SEED = 0xC70F6907


def shift_mix(v):
    return v ^ (v >> 47)  # its own inverse on 64 bits (47 > 32)


def mix(block):
    return (shift_mix((block * MUL) & MASK) * MUL) & MASK


def unmix(value):
    return (shift_mix((value * MUL_INV) & MASK) * MUL_INV) & MASK


def step(state, block):
    return ((state ^ mix(block)) * MUL) & MASK


def main():
    prefix, count = sys.argv[1].encode(), int(sys.argv[2])
    pad = b"x" * (-len(prefix) % 8)
    head = prefix + pad
    state = SEED ^ (((len(head) + 17) * MUL) & MASK)
    for i in range(0, len(head), 8):
        state = step(state, int.from_bytes(head[i:i + 8], "little"))
    target = step(step(state, int.from_bytes(b"aaaaaaaa", "little")),
                  int.from_bytes(b"bbbbbbbb", "little"))
    made, i = 0, 0
    while made < count:
        first = b"%08d" % i
        i += 1
        after = step(state, int.from_bytes(first, "little"))
        second = unmix(((target * MUL_INV) & MASK) ^ after).to_bytes(8, "little")
        if 0 in second or ord("/") in second:
            continue
        print((pad + first + second + b"z").hex())
        made += 1


if __name__ == "__main__":
    main()
