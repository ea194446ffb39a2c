"""The one summary table of scripts/gpu-check.sh: its phases (setup, bench) and every CUDA test on each ComfyUI host,
from the phases file the script writes and pytest's JUnit XML per host. Standard library only.

Usage: python scripts/gpu_check_summary.py PHASES_TSV OUTPUT_MD [HOST=JUNIT_XML ...]
Exit status 1 when a phase or a test failed (or a host's report is missing), else 0.
       python scripts/gpu_check_summary.py --count JUNIT_XML     one line: passed, failed, skipped (the figure line)
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

NOTE_WIDTH = 110


def _short(text: str, width: int = NOTE_WIDTH) -> str:
    text = " ".join(text.split()).replace("|", "/")
    return text if len(text) <= width else text[: width - 1] + "…"


def read_junit(path: Path) -> dict[str, tuple[str, str]] | None:
    """test name -> (status, note) of one pytest JUnit report, or None when it is missing or unreadable."""
    if not path.is_file():
        return None
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return None
    results = {}
    for case in root.iter("testcase"):
        name = case.get("name", "?")
        seconds = float(case.get("time", 0) or 0)
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        extra = ", ".join(f"{k} {v}" for k, v in properties.items())
        failed = case.find("failure") if case.find("failure") is not None else case.find("error")
        skipped = case.find("skipped")
        if failed is not None:
            message = failed.get("message") or (failed.text or "").strip().splitlines()[-1:] or [""]
            results[name] = ("FAIL", _short(message if isinstance(message, str) else message[0]))
        elif skipped is not None:
            reason = (skipped.get("message") or "").removeprefix("Skipped: ")
            results[name] = ("skip", _short(reason))
        else:
            results[name] = (f"pass {seconds:.1f} s", extra)
    return results


def count_line(path: Path) -> str:
    results = read_junit(path)
    if results is None:
        return "no report (the run did not finish)"
    states = [status.split()[0] for status, _ in results.values()]
    failed = [name for name, (status, _) in results.items() if status == "FAIL"]
    line = f"{states.count('pass')} passed, {len(failed)} failed, {states.count('skip')} skipped"
    return line + (f" ({', '.join(failed)})" if failed else "")


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--count":
        print(count_line(Path(argv[1])))
        return 0
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    phases_path, output = Path(argv[0]), Path(argv[1])
    hosts = [item.split("=", 1) for item in argv[2:]]
    failed = False
    def row(*cells: str) -> str:
        return "| " + " | ".join(cells) + " |"

    lines = [row("check", *(f"ComfyUI {host}" for host, _ in hosts), "notes"), "|---" * (len(hosts) + 2) + "|"]
    last = []  # the "total" phase goes under the tests
    for line in phases_path.read_text(encoding="utf-8").splitlines() if phases_path.is_file() else []:
        name, status, seconds, note = (line.split("\t") + ["", "", ""])[:4]
        failed |= status not in ("ok", "skipped")
        state = f"{status} {seconds}".strip()
        (last if name == "total" else lines).append(row(name, state, *([""] * (len(hosts) - 1)), _short(note)))
    reports = {host: read_junit(Path(path)) for host, path in hosts}
    names: list[str] = []
    for results in reports.values():
        for name in results or {}:
            if name not in names:
                names.append(name)
    for host, results in reports.items():
        if results is None:
            failed = True
            cells = ["missing" if other == host else "" for other, _ in hosts]
            lines.append(row(f"pytest report of ComfyUI {host}", *cells, "the run did not finish"))
    for name in names:
        cells, notes = [], {}
        for host, results in reports.items():
            status, note = (results or {}).get(name, ("not run", ""))
            failed |= status == "FAIL"
            cells.append(status)
            if note:
                notes[host] = note
        if len(set(notes.values())) == 1 and len(notes) == len(reports):  # the same on every host: once
            text = next(iter(notes.values()))
        else:
            text = "; ".join(f"{host}: {note}" for host, note in notes.items())
        lines.append(row(name, *cells, _short(text, 2 * NOTE_WIDTH)))
    table = "\n".join(lines + last)
    output.write_text(table + "\n", encoding="utf-8")
    print(table)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
