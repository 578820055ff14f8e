#!/usr/bin/env python3
"""Prints the translation units clang-tidy must look at again since a commit whose lint was clean.

    tools/lint-changed-units.py BUILD_DIR REV DIRS_REGEX

A translation unit's clang-tidy result depends only on its source, the headers it includes, its
compile command, clang-tidy and .clang-tidy. So once the whole tree linted clean at REV, a unit needs
linting again only when one of its repository inputs changed since REV. Its inputs are read from
ninja's dependency log of BUILD_DIR (the headers the compiler actually opened), so the build must be
done. Prints one absolute source path per line, or the single line ALL when the whole tree must be
linted (REV unknown or not an ancestor, the lint's own configuration or a CMakeLists.txt changed);
the reason goes to stderr. The unchanged files in the repository's own headers (system headers come
from the installed packages, the same for REV and now) keep their clean result.
"""
import json
import os
import re
import shlex
import subprocess
import sys

# A change to any of these can change every unit's result: the checks, the runner, the compile flags.
WHOLE_TREE_TRIGGERS = re.compile(r"(^|/)(CMakeLists\.txt|\.clang-tidy)$|^cmake/|^tools/clang-tidy\.sh$|"
                                 r"^tools/lint-changed-units\.py$")


def git(root, *args):
    return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True)


def all_units(reason):
    print(f"lint-changed-units: the whole tree: {reason}", file=sys.stderr)
    print("ALL")
    return 0


def changed_paths(root, rev):
    """Repository files that differ between REV and the working tree, untracked ones included."""
    names = git(root, "diff", "--name-only", rev).stdout.splitlines()
    names += git(root, "ls-files", "--others", "--exclude-standard").stdout.splitlines()
    return {n for n in names if n}


def dependency_log(build):
    """Object path (as ninja names it) -> (record valid, absolute input paths)."""
    out = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True, text=True, check=True).stdout
    deps, current = {}, None
    for line in out.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            target, _, info = line.partition(": #deps")
            current = (target.strip(), "(VALID)" in info)
            deps[current[0]] = (current[1], set())
        elif current is not None:
            deps[current[0]][1].add(os.path.normpath(os.path.join(build, line.strip())))
    return deps


def output_of(unit):
    words = unit["arguments"] if "arguments" in unit else shlex.split(unit.get("command", ""))
    for i, word in enumerate(words[:-1]):
        if word == "-o":
            return words[i + 1]
    return None


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    build, rev, dirs = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
    root = git(os.path.dirname(os.path.abspath(__file__)), "rev-parse", "--show-toplevel").stdout.strip()
    if git(root, "rev-parse", "--verify", "--quiet", rev + "^{commit}").returncode != 0:
        return all_units(f"{rev} is not in this clone's history")
    if git(root, "merge-base", "--is-ancestor", rev, "HEAD").returncode != 0:
        return all_units(f"{rev} is not an ancestor of HEAD")
    changed = changed_paths(root, rev)
    triggers = sorted(n for n in changed if WHOLE_TREE_TRIGGERS.search(n))
    if triggers:
        return all_units(f"{', '.join(triggers)} changed since {rev}")
    changed_abs = {os.path.join(root, n) for n in changed}

    deps = dependency_log(build)
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        units = json.load(f)
    unit_re = re.compile("^" + re.escape(root) + "/(" + dirs + ")/.*\\.cpp$")
    chosen, considered = [], 0
    for unit in units:
        source = os.path.normpath(os.path.join(unit["directory"], unit["file"]))
        if not unit_re.match(source):
            continue
        considered += 1
        output = output_of(unit)
        valid, inputs = deps.get(output, (False, set())) if output else (False, set())
        if not valid or source not in inputs or inputs & changed_abs:
            chosen.append(source)
    print(f"lint-changed-units: {len(chosen)} of {considered} translation units have inputs changed since "
          f"{rev} (the rest linted clean there)", file=sys.stderr)
    for source in sorted(set(chosen)):
        print(source)
    return 0


if __name__ == "__main__":
    sys.exit(main())
