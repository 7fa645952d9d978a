"""The documentation site builds with no broken link, and the README's links lead somewhere.

``mkdocs build --strict`` (mkdocs.yml sets link and anchor validation to warnings, which
strict turns into failures) fails on a page missing from the nav, a link or anchor to
nothing, or a snippet whose file is gone.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MKDOCS = Path(sys.executable).with_name("mkdocs")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_site_builds_strict(tmp_path: Path) -> None:
    built = subprocess.run(
        [str(MKDOCS), "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "performance.html").exists()


def test_readme_links_point_at_files() -> None:
    links = [link.split("#")[0] for link in LINK.findall((REPO / "README.md").read_text())]
    local = [link for link in links if link and "://" not in link]
    assert local, "the README should link into docs/"
    missing = [link for link in local if not (REPO / link).exists()]
    assert missing == [], f"README links to missing files: {missing}"


def test_the_readme_domains_and_sections_examples_are_valid_definitions() -> None:
    """The README's examples are checked as a write would check them."""
    import json

    from cairn.context.definitions import check_definition

    readme = (REPO / "README.md").read_text()
    domains = re.search(r"context\.domains\.v1 \"Domains\" --context '(\{.*?\})'", readme, re.S)
    assert domains is not None
    check_definition("context.domains.v1", json.loads(domains.group(1)))
    sections = re.search(r"```json\n(\"sections\".*?)\n```", readme, re.S)
    assert sections is not None
    agent = json.loads(
        '{"agent_id": "readme", "context_trigger": {"any_tags": ["x"]}, ' + sections.group(1) + "}"
    )
    check_definition("agent.def.v1", agent)
    assert len(agent["sections"]) == 2
