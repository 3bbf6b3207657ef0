#!/usr/bin/env python3
"""No container keyed by text the agent names is a hash table.

std::hash<std::string> is unseeded (libstdc++: MurmurHash2 with a fixed seed), so
an agent can make any number of file names whose paths hash alike
(bench/colliding_names.py makes them). Kept in an unordered_set or map, each
lookup then walks every one of them, under the lock every mutation of the root
takes: 20,000 such creates cost the daemon 4.4 times the CPU of as many other
names (bench/hash_flood.sh). The rooms that hold paths, process names and keys
built from them use ordered containers instead. This checks their sources.
"""
import pathlib
import re
import sys

ROOMS = ["fuse", "journal", "report", "gate", "control", "service", "state"]
HASHED_TEXT = re.compile(
    r"unordered_(?:multi)?(?:set|map)\s*<\s*(?:const\s+)?std::(?:string|string_view)\b")


def main(root: pathlib.Path) -> int:
    problems = []
    for room in ROOMS:
        for path in sorted((root / room).rglob("*")):
            if path.suffix not in (".cpp", ".hpp"):
                continue
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if HASHED_TEXT.search(line):
                    problems.append(f"{path.relative_to(root)}:{n}: a hash table keyed by text; "
                                    "use std::map or std::set (names made to collide would "
                                    "make every lookup walk them all)")
    for p in problems:
        print(p)
    print(f"{len(problems)} hash tables keyed by text in {', '.join(ROOMS)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1])))
