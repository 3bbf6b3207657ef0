#!/usr/bin/env python3
"""The rooms of the tree and which rooms each may use, checked from the includes.

A room that includes a room it may not use fails the test, so a dependency that
points the wrong way is a red build, not a review comment. Also checks that every
source file in a room is listed in its CMakeLists.txt (sources are explicit).
"""
import pathlib
import re
import sys

ALLOWED = {
    "base": set(),
    "journal": {"base"},
    "memory": {"base"},
    # Signed heads of the audit chain: keys, notes, checkpoints, the verifier.
    "signing": {"base"},
    "gate": {"base"},
    "state": {"base", "gate"},
    # The reports and their way to the audit: below every room that reports or
    # publishes, above the policy whose words they use and the audit log.
    "report": {"base", "gate", "memory", "signing"},
    "service": {"base", "memory", "gate", "journal", "state", "report"},
    "protocol": {"base"},
    "control": {"base", "memory", "gate", "journal", "report", "service", "protocol"},
    "fuse": {"base", "gate", "journal", "report"},
    "daemon": {"base", "memory", "gate", "journal", "state", "report", "service", "protocol", "control",
               "fuse", "signing"},
    "leasectl": {"base", "gate", "protocol", "fleet"},
    # The fleet's ledger (PostgreSQL) and the bridge: a client of the control
    # socket like leasectl, never of the daemon's insides.
    "fleet": {"base", "protocol", "signing"},
    "signing": {"base"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/')


def check(root: pathlib.Path) -> list:
    problems = []
    for room, allowed in ALLOWED.items():
        folder = root / room
        if not folder.is_dir():
            problems.append(f"{room}/: the room is missing")
            continue
        cmake = (folder / "CMakeLists.txt").read_text()
        for path in sorted(folder.rglob("*")):
            if path.suffix not in (".cpp", ".hpp", ".def"):
                continue
            rel = path.relative_to(root)
            if path.suffix == ".cpp" and path.name not in cmake:
                problems.append(f"{rel}: not listed in {room}/CMakeLists.txt")
            for n, line in enumerate(path.read_text().splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                if target != room and target in ALLOWED and target not in allowed:
                    problems.append(f"{rel}:{n}: {room}/ may not use {target}/ "
                                    f"(it may use: {', '.join(sorted(allowed)) or 'nothing'})")
            text = path.read_text()
            if room in ("fuse", "journal", "state", "signing") and re.search(r"sqlite3?\.h|sqlite3_", text):
                problems.append(f"{rel}: {room}/ may not touch SQLite")
            if room in ("gate", "memory", "state", "report", "service", "journal", "signing", "fleet") and \
                    re.search(r"#\s*include\s*<fuse", text):
                problems.append(f"{rel}: {room}/ may not include FUSE headers")
    return problems


def self_test() -> None:
    """The check must be able to fail: a tree with one upward include is caught."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        tree = pathlib.Path(tmp)
        for room in ALLOWED:
            (tree / room).mkdir()
            (tree / room / "CMakeLists.txt").write_text("a.cpp\n")
            (tree / room / "a.cpp").write_text('#include "base/x.hpp"\n')
        (tree / "leasectl" / "a.cpp").write_text('#include "memory/sqlite_db.hpp"\n')
        (tree / "gate" / "b.cpp").write_text("#include <fuse_lowlevel.h>\n")
        (tree / "state" / "a.cpp").write_text('#include "service/service.hpp"\n')
        (tree / "gate" / "a.cpp").write_text('#include "report/reports.hpp"\n')
        (tree / "report" / "a.cpp").write_text('#include "service/service.hpp"\n')
        found = check(tree)
        expect = ["leasectl/a.cpp:1: leasectl/ may not use memory/",
                  "state/a.cpp:1: state/ may not use service/",
                  "gate/b.cpp: not listed", "gate/b.cpp: gate/ may not include FUSE",
                  "gate/a.cpp:1: gate/ may not use report/",
                  "report/a.cpp:1: report/ may not use service/"]
        for e in expect:
            assert any(p.startswith(e) for p in found), (e, found)


def main() -> int:
    self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    problems = check(root)
    for p in problems:
        print(p)
    print(f"{len(problems)} layout problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
