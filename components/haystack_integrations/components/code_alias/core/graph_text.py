"""The reference graph's answers as text for a terminal: `path:line` first, so terminals and editors link it.

Framework-free and import-light (no graph, no parser): the CLI prints a server's answer with it alone.
"""

from __future__ import annotations

from typing import Any

__all__ = ["answer_text", "usage_text", "usage_title"]


def _where(site: dict[str, Any]) -> str:
    caller = site["caller"]
    who = caller["qualified_name"] + (" (module code)" if caller.get("kind") == "module" else "")
    test = "  [test]" if site.get("test") else ""
    return f"{site['file_path']}:{site['line']}  {who}{test}"


def answer_text(answer: dict[str, Any], what: str) -> str:
    """
    An answer of `callers_answer` ("callers"), `callees_answer` ("callees") or `impact_answer` ("impact") as text:
    a block per definition, `path:line` first so terminals and editors link it.
    """
    lines: list[str] = []
    several = len({target.get("repo") for target in answer["targets"]}) > 1  # name the repository when it tells apart
    for target in answer["targets"]:
        head = f"{target['qualified_name']} ({target['kind']}, {target['file_path']}:{target['start_line']})"
        if several and target.get("repo"):
            head += f" [{target['repo']}]"
        total = target["total"]
        if what == "callers":
            lines.append(f"{head}: {total['callers']} caller(s), {total['ambiguous']} ambiguous")
            lines += [f"  {_where(site)}" for site in target["callers"]]
            if target["ambiguous"]:
                lines.append("  may call it (the receiver's type or the name's origin is not known):")
                lines += [f"    {_where(site)}  ({site['reason']})" for site in target["ambiguous"]]
        elif what == "callees":
            lines.append(
                f"{head}: calls {total['callees']} definition(s), {total['ambiguous']} ambiguous, "
                f"{total['external']} outside the index"
            )
            for site in target["callees"]:
                callee = site["callee"]
                where = f"{callee['file_path']}:{callee['start_line']}"
                lines.append(f"  {site['line']}: {callee['qualified_name']}  {where}")
            for site in target["ambiguous"]:
                names = ", ".join(site["candidate_names"])
                lines.append(f"  {site['line']}: {site['name']}?  one of {site['candidates']}: {names}")
            if target["external"]:
                outside = sorted(
                    {f"{s['qualifier']}.{s['name']}" if s.get("qualifier") else s["name"] for s in target["external"]}
                )
                lines.append(f"  outside the index: {', '.join(outside)}")
        else:
            lines.append(
                f"{head}: {total['reached']} definition(s) reach it within {answer['depth']} hop(s), "
                f"{total['tests']} in tests, {total['ambiguous']} ambiguous"
            )
            for site in target["impact"]:
                mark = " (ambiguous)" if site["status"] == "ambiguous" else ""
                lines.append(f"  {'  ' * (site['depth'] - 1)}{_where(site)}  [{site['kind']} of {site['via']}]{mark}")
    if answer["definitions"] > len(answer["targets"]):
        lines.append(f"({answer['definitions']} definitions have this name; the first {len(answer['targets'])} shown)")
    return "\n".join(lines)


def usage_title(usage: dict[str, Any]) -> str:
    """The heading of an ask answer's `usage` part (the graph's callers or impact of the symbol asked about)."""
    return ("What a change can break" if usage["kind"] == "impact" else "Who calls it") + " (reference graph):"


def usage_text(payload: dict[str, Any]) -> str:
    """The `usage` part of an ask answer as text, after a blank line (empty when there is none)."""
    usage = payload.get("usage")
    if not usage:
        return ""
    return f"\n{usage_title(usage)}\n{answer_text(usage, usage['kind'])}"
