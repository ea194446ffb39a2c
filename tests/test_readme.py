"""The README is a user's page: at most ~2,500 words, its pictures committed, and every relative link in it and in
docs/ leads to a file that exists (the reference moved to docs/ in 0.2.0)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_WORDS = 2500
PICTURES = ("docs/canvas.jpg", "docs/schedule-preview.jpg", "docs/template-cards.jpg")
#: linked before another branch adds them: target -> who adds it (a link stays checked once the file exists)
PENDING: dict[str, str] = {}  # pages a link may name before they exist (none now)


def words(text: str) -> int:
    """Whitespace-separated tokens holding a letter or digit (table bars and arrows are not words)."""
    return len(re.findall(r"\S*\w\S*", text))


def test_readme_is_short():
    count = words((ROOT / "README.md").read_text(encoding="utf-8"))
    assert count <= MAX_WORDS, f"README.md has {count} words; move reference material to docs/"


def test_readme_keeps_its_pictures():
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert set(PICTURES) <= set(pictures)


def test_relative_links_resolve():
    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#")[0]).resolve()
            if not path.exists() and path.relative_to(ROOT).as_posix() not in PENDING:
                broken.append(f"{page.relative_to(ROOT)} → {target}")
    assert not broken, broken
