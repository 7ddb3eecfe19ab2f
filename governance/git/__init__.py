"""Floor 2, git access: the only package that imports gitpython.

* `repo`   - `GitRepo`: open a repository, read refs, blobs and history.
* `writes` - commits, merges, config, worktrees and pushes.
* `mainref` - which commit "main" is: the one rule every command uses.
"""
