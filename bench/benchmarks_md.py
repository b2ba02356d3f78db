"""BENCHMARKS.md sections, one per bench script: write_section("kv", text)
replaces the section whose heading starts with "## kv:" (or adds it, before
the hand-written "## notes" when there is one). NO_WRITE=1 leaves the file
alone. Used by the bench/run_*.sh scripts' reports."""

import os
import pathlib
import re

PATH = pathlib.Path("BENCHMARKS.md")
HEADER = ("# Benchmarks\n\nEach section is written by the script it names; numbers come from "
          "one run on this machine.\n")


def write_section(key: str, text: str) -> None:
    if os.environ.get("NO_WRITE") == "1":
        return
    text = text.rstrip() + "\n"
    cur = PATH.read_text() if PATH.exists() else HEADER
    pat = re.compile(r"^## " + re.escape(key) + r":.*?(?=^## |\Z)", re.S | re.M)
    if pat.search(cur):
        cur = pat.sub(lambda _: text + "\n", cur)
    elif "\n## notes" in cur:
        i = cur.index("\n## notes") + 1
        cur = cur[:i] + text + "\n" + cur[i:]
    else:
        cur = cur.rstrip() + "\n\n" + text
    PATH.write_text(cur)
