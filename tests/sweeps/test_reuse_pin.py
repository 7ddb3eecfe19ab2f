"""`/reuse-sweep-run [RUN_ID]` comments: who is heard, which one decides (pure)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from governance.forge.base import Comment
from governance.sweeps.reuse_pin import DEFAULT_AUTHORIZERS, command_of, hear


def comment(k: int, body: str, association: str = "MEMBER", author: str = "maint") -> Comment:
    return Comment(k, body, author, f"2026-08-2{k}T10:00:00Z", association)


def test_the_newest_allowed_comment_wins_and_a_bare_command_unpins() -> None:
    pinned = hear([comment(1, "/reuse-sweep-run 111"), comment(2, "/reuse-sweep-run 222")],
                  DEFAULT_AUTHORIZERS)  # fmt: skip
    assert pinned.authorization and pinned.authorization.run_id == "222"
    assert pinned.authorization.source() == "CI run 222"
    unpinned = hear([comment(1, "/reuse-sweep-run 111"), comment(2, "/reuse-sweep-run")],
                    DEFAULT_AUTHORIZERS)  # fmt: skip
    assert unpinned.authorization and unpinned.authorization.run_id is None
    assert unpinned.authorization.source() is None
    assert (
        "authorised (any source) by @maint (MEMBER) in comment 2"
        in unpinned.authorization.describe()
    )


def test_only_allowed_associations_are_heard_and_the_others_are_reported() -> None:
    heard = hear(
        [comment(1, "/reuse-sweep-run 111"),
         comment(2, "/reuse-sweep-run 999", association="CONTRIBUTOR", author="drive-by")],
        DEFAULT_AUTHORIZERS,
    )  # fmt: skip
    assert heard.authorization and heard.authorization.run_id == "111"
    assert heard.ignored == (
        "comment 2 by @drive-by (CONTRIBUTOR): not one of COLLABORATOR, MEMBER, OWNER",
    )
    assert hear([comment(1, "/reuse-sweep-run 5", association="")], ["OWNER"]).authorization is None


def test_only_a_line_that_is_the_command_counts() -> None:
    assert command_of("please /reuse-sweep-run 123 later") == (False, None, "")
    assert command_of("> /reuse-sweep-run 123\nthanks") == (False, None, "")
    assert command_of("`/reuse-sweep-run 123`") == (False, None, "")
    assert command_of("LGTM\n  /reuse-sweep-run 123  \n") == (True, "123", "")
    assert command_of("/reuse-sweep-run") == (True, None, "")
    has, run, problem = command_of("/reuse-sweep-run latest")
    assert has and run is None and "'latest' is not a run id" in problem
    assert hear([comment(1, "/reuse-sweep-run latest")], DEFAULT_AUTHORIZERS).authorization is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["/reuse-sweep-run", "/reuse-sweep-run 7", "/reuse-sweep-run 8", "hi"]),
            st.sampled_from(["OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR", "NONE"]),
        ),
        max_size=8,
    )
)
def test_the_decision_is_the_last_allowed_command(items: list[tuple[str, str]]) -> None:
    comments = [comment(k, body, association) for k, (body, association) in enumerate(items)]
    heard = hear(reversed(comments), DEFAULT_AUTHORIZERS)  # order given does not matter
    allowed = [
        c for c in comments if c.body != "hi" and c.author_association in DEFAULT_AUTHORIZERS
    ]
    if not allowed:
        assert heard.authorization is None
    else:
        assert heard.authorization is not None and heard.authorization.comment_id == allowed[-1].id
