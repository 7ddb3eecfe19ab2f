"""Floor 2, git access: the only package that imports gitpython.

* `repo`      - `GitRepo`: open a repository; refs, blobs, history, local config.
* `catfile`   - object reads through one long-lived `git cat-file` process.
* `hookenv`   - the GIT_* variables a hook leaks, removed before git runs.
* `objects`   - write blobs, trees, commits; merges in memory (`GitRepo.objects`).
* `worktrees` - HEAD, the index, the working tree, linked worktrees (`GitRepo.worktree`).
* `remotes`   - remote URLs, fetch, push with a lease (`GitRepo.remotes`).
* `mainref`   - which commit "main" is: the one rule every command uses.
* `files`     - read regular files only, never out of the repository (symlinks, submodules refused).
* `snapshot`  - a folder of a commit written to disk; the one join of tree paths onto a folder.
"""
