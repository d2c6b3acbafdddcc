#!/usr/bin/env python3
"""Judge a conformance results directory (`conformance server -o DIR`).

One line per scenario, then `conformance: N passed, M failed, K not applicable`. A scenario
passes when none of its checks is a FAILURE. Resources, prompts and completions do not apply to
a tools-only server; every other scenario must pass, and the scenarios listed in REQUIRED must be
present. Exit 1 on any failure.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REQUIRED = [
    "server-initialize", "ping", "logging-set-level", "tools-list",
    "tools-call-simple-text", "tools-call-image", "tools-call-audio",
    "tools-call-embedded-resource", "tools-call-mixed-content", "tools-call-with-logging",
    "tools-call-error", "tools-call-with-progress", "tools-call-sampling",
    "tools-call-elicitation", "elicitation-sep1034-defaults", "elicitation-sep1330-enums",
    "dns-rebinding-protection", "server-sse-multiple-streams", "json-schema-2020-12",
]
NOT_APPLICABLE = re.compile(r"^(resources-|prompts-|completion-)")

# Two scenarios pass on any error result that carries text: check the real result too.
EXACT_RESULTS = {
    "tools-call-simple-text": (False, "This is a simple text response for testing."),
    "tools-call-error": (True, "This tool intentionally returns an error for testing"),
}


def scenario_of(directory: Path) -> str:
    # server-<scenario>-<ISO timestamp with dashes>
    m = re.match(r"^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$", directory.name)
    return m.group(1) if m else directory.name


def judge(checks: list[dict], scenario: str) -> tuple[bool, str]:
    failures = [c for c in checks if c.get("status") == "FAILURE"]
    if failures:
        return False, "; ".join(f"{c.get('id')}: {c.get('errorMessage')}" for c in failures)
    if not checks:
        return False, "no checks recorded"
    if scenario in EXACT_RESULTS:
        want_error, want_text = EXACT_RESULTS[scenario]
        results = [c["details"]["result"] for c in checks if (c.get("details") or {}).get("result")]
        if not results:
            return False, "no result recorded"
        result = results[0]
        texts = [b.get("text") for b in result.get("content", []) if b.get("type") == "text"]
        if bool(result.get("isError")) != want_error or texts != [want_text]:
            return False, f"unexpected result {json.dumps(result)[:300]}"
    warnings = sum(c.get("status") == "WARNING" for c in checks)
    return True, f"{len(checks)} checks" + (f", {warnings} warning(s)" if warnings else "")


def main() -> int:
    root = Path(sys.argv[1])
    seen: dict[str, tuple[bool, str]] = {}
    skipped: list[str] = []
    for directory in sorted(p for p in root.iterdir() if p.is_dir()):
        scenario = scenario_of(directory)
        if NOT_APPLICABLE.match(scenario):
            skipped.append(scenario)
            continue
        checks_file = directory / "checks.json"
        try:
            checks = json.loads(checks_file.read_text())
        except (OSError, ValueError) as e:
            seen[scenario] = (False, f"unreadable {checks_file.name}: {e}")
            continue
        seen[scenario] = judge(checks, scenario)
    for scenario in REQUIRED:
        seen.setdefault(scenario, (False, "did not run"))
    for scenario, (ok, detail) in seen.items():
        print(f"  {'PASS' if ok else 'FAIL'}  {scenario}  ({detail})")
    for scenario in skipped:
        print(f"  n/a   {scenario}  (no resources, prompts or completions on this server)")
    passed = sum(ok for ok, _ in seen.values())
    failed = len(seen) - passed
    print(f"conformance: {passed} passed, {failed} failed, {len(skipped)} not applicable")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
