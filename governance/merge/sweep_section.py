"""The sweep part of a merge report: per row, the run reused (its identity,
where it was measured, any harness drift) or why the row ran again, and what
authorised the reuse; as text and as data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from governance.sweeps.dispatch import LaunchResult
from governance.sweeps.resolve import Resolved
from governance.sweeps.reuse import ReuseDecision


@dataclass(slots=True)
class SweepSection:
    """The sweep part of a merge report."""

    decision: ReuseDecision
    resolved: list[Resolved] = field(default_factory=list)
    launch: LaunchResult | None = None
    dry_run: bool = False
    commit: str = ""  # what rerun rows are measured at (the prepared merge commit)
    authorization: str = ""  # the `/reuse-sweep-run` comment that decided reuse sources
    ignored_commands: tuple[str, ...] = ()  # commands by authors who may not decide

    @property
    def interrupted(self) -> bool:
        """Ctrl-C stopped the launch (outcomes were recorded as cancelled)."""
        return self.launch is not None and self.launch.interrupted

    @property
    def ok(self) -> bool:
        if not self.decision.ok or any(not r.ok for r in self.resolved):
            return False
        return self.launch is None or self.launch.ok

    def rows(self) -> list[dict[str, Any]]:
        """Per row: reused (run id, commit) or rerun (reason, outcome)."""
        outcomes = {o.job.key: o for o in (self.launch.outcomes if self.launch else [])}
        ids = self.launch.run_ids if self.launch else {}
        problems = {r.key: r.problem for r in self.resolved if not r.ok}
        out = []
        for d in self.decision.rows:
            item: dict[str, Any] = {
                "key": d.key,
                "where": d.row.where,
                "fingerprint": d.row.fingerprint,
                "conc": d.row.data.get("conc"),
                "identity": d.identity,
                "untraced": list(d.unseen),  # dynamic sources the identity cannot see
            }
            if d.reused_from is not None:
                item.update(
                    action="reused",
                    origin="ahead" if d.ahead else "pr",  # main's newer commits, or the PR's
                    run_id=d.reused_from.run_id,
                    commit=d.reused_from.commit,  # where the reused run was measured
                    result_path=d.reused_from.result_path,
                    drift=[{"path": x.path, "commits": list(x.commits)} for x in d.drift],
                )
            else:
                item.update(action="rerun", reason=str(d.reason), detail=d.detail)
                if d.key in problems:
                    item["status"] = "not launched"
                    item["problem"] = problems[d.key]
                elif d.key in outcomes:
                    item["status"] = str(outcomes[d.key].status)
                    if self.launch is not None and d.key in self.launch.stopped:
                        item["stopped"] = self.launch.stopped[d.key]  # canary, fail-fast
                    item["run_id"] = ids.get(d.key)
                    item["commit"] = self.commit
                else:
                    item["status"] = "dry-run" if self.dry_run else "not launched"
            out.append(item)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": str(self.decision.mode),
            "dry_run": self.dry_run,
            "reused": len(self.decision.reused),
            "rerun": len(self.decision.rerun),
            "ok": self.ok,
            "rows": self.rows(),
            "authorization": self.authorization,
            "ignored_commands": list(self.ignored_commands),
        }

    def render_text(self) -> str:
        lines = [
            f"sweep after merge ({self.decision.mode}): {len(self.decision.reused)} reused, "
            f"{len(self.decision.rerun)} rerun" + (" (dry run)" if self.dry_run else "")
        ]
        if self.authorization:
            lines.append(f"  {self.authorization}")
        lines += [f"  ignored /reuse-sweep-run: {why}" for why in self.ignored_commands]
        for item in self.rows():
            identity = f"identity {(item['identity'] or 'untraced')[:16]}"
            if item["action"] == "reused":
                lines.append(
                    f"  reused {item['key']}  {identity}  run {item['run_id']} measured at "
                    f"{item['commit'][:12]}"
                    + (" (landed ahead)" if item["origin"] == "ahead" else "")
                )
                for drift in item["drift"]:
                    by = ", ".join(c[:12] for c in drift["commits"]) or "no commit found"
                    lines.append(f"         harness drift: {drift['path']} changed on main ({by})")
                for command in item["untraced"]:  # reused: say what identity could not see
                    lines.append(f"         not traced (list it in harness-inputs): {command}")
            else:
                why = item["reason"] + (f" ({item['detail']})" if item["detail"] else "")
                status = item.get("problem") or item["status"]
                if item.get("stopped"):
                    status += f" ({item['stopped']})"
                if item.get("run_id") is not None:
                    status += f", run {item['run_id']} measured at {item['commit'][:12]}"
                lines.append(f"  rerun  {item['key']}  {identity}  {why}: {status}")
        return "\n".join(lines) + "\n"
