"""`gov` commands for the merge area; registered on the app in `governance.cli`."""

from __future__ import annotations

from governance.cli import app, guarded, open_repo, state  # noqa: F401
