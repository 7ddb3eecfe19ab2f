"""prepare-merge and the two worktree edits behind `gov canonicalize` and
`gov resolve-conflict` (docs/prepare-merge.md)."""
