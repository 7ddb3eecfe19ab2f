"""The GitHub routes `gov queue --forge github` needs beyond the `Forge` interface:
who added a label (issue events), what a user may do (collaborator permission),
a comment edited in place, and a commit's tree as GitHub has it.

Every answer is shape-checked (`github_shapes.Shape`): the server is not trusted
to send what was asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from governance.forge.base import Comment
from governance.forge.github import GitHubForge
from governance.forge.github_shapes import Shape, comment_from

# The collaborator permissions (and role names) that may enqueue.
WRITERS = frozenset({"admin", "maintain", "write"})


@dataclass(frozen=True, slots=True)
class LabelEvent:
    label: str
    actor: str
    created_at: str


def label_events(forge: GitHubForge, number: int) -> list[LabelEvent]:
    """The `labeled` events of issue/PR `number`, oldest first."""
    path = f"/repos/{forge.slug}/issues/{number}/events"
    shape = Shape(f"GET {path}")
    found = []
    for item in forge.rest.paginate(path):
        event = shape.obj(item, "the event")
        if event.get("event") != "labeled":
            continue
        label = shape.text(shape.obj(event.get("label"), "event.label"), "name", "event.label")
        actor = event.get("actor")
        login = shape.text(shape.obj(actor, "event.actor"), "login", "event.actor") if actor else ""
        found.append(
            LabelEvent(label, login, shape.text(event, "created_at", "event", optional=True))
        )
    return sorted(found, key=lambda e: e.created_at)


def permission(forge: GitHubForge, user: str) -> str:
    """`user`'s permission on the repository (admin, maintain, write, triage,
    read or none); "none" for a user GitHub does not know as a collaborator."""
    path = f"/repos/{forge.slug}/collaborators/{quote(user, safe='')}/permission"
    response = forge.rest.request("GET", path, allow=frozenset({404}))
    if response.status_code == 404:
        return "none"
    shape = Shape(f"GET {path}")
    data = shape.obj(forge.rest.decode(response, "GET", path), "the permission")
    # `permission` folds maintain into write and triage into read; `role_name` keeps them.
    role = shape.text(data, "role_name", "permission", optional=True)
    level = shape.text(data, "permission", "permission")
    return role if role in WRITERS else level


def may_write(forge: GitHubForge, user: str) -> tuple[bool, str]:
    """(allowed, the permission found) for a user who asked to enqueue."""
    if not user:
        return False, "none"
    found = permission(forge, user)
    return found in WRITERS, found


def edit_comment(forge: GitHubForge, comment_id: int, body: str) -> Comment:
    path = f"/repos/{forge.slug}/issues/comments/{comment_id}"
    response = forge.rest.request("PATCH", path, json={"body": body})
    return comment_from(forge.rest.decode(response, "PATCH", path), f"PATCH {path}")


def commit_tree(forge: GitHubForge, sha: str) -> tuple[str, tuple[str, ...]]:
    """(tree id, parent ids) of commit `sha` as GitHub has it."""
    path = f"/repos/{forge.slug}/git/commits/{sha}"
    shape = Shape(f"GET {path}")
    data = shape.obj(forge.rest.get_json(path), "the commit")
    got = shape.sha(data, "sha", "commit")
    if got != sha:
        raise shape.fail(f"asked for commit {sha[:12]}, got {got[:12]}")
    tree = shape.sha(shape.obj(data.get("tree"), "commit.tree"), "sha", "commit.tree")
    parents = tuple(
        shape.sha(shape.obj(p, "commit.parents[]"), "sha", "commit.parents[]")
        for p in shape.items(data.get("parents", []), "commit.parents")
    )
    return tree, parents
