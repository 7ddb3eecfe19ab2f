"""GitHub Actions runs and their artifacts, for `gov runs import --github-run` (REST).

Everything here is forge input: the run's shape is checked, artifact zips are
bounded (compressed size, member count, expanded size) and their member names
must be plain relative paths (no `..`, no absolute path, no symlink), and the
download GitHub redirects to (blob storage, another host) is fetched without
the token. A run that did not succeed, or whose artifacts expired, is said so
by the caller's rules, not hidden here.
"""

from __future__ import annotations

import io
import stat
import zipfile
from dataclasses import dataclass
from urllib.parse import urlsplit

from governance.forge.base import ForgeError
from governance.forge.github import GitHubForge
from governance.forge.github_shapes import Shape

MAX_ZIP_BYTES = 256 * 1024 * 1024  # one artifact as downloaded
MAX_MEMBERS = 10_000  # files in one artifact
MAX_EXPANDED_BYTES = 512 * 1024 * 1024  # one artifact, unpacked (JSON members only are kept)
_LOOPBACK = {"127.0.0.1", "::1", "localhost"}


@dataclass(frozen=True, slots=True)
class SweepRun:
    id: int
    head_sha: str
    head_branch: str
    event: str
    status: str
    conclusion: str  # "" while running
    pulls: tuple[int, ...]  # the PR numbers GitHub associates with the run


@dataclass(frozen=True, slots=True)
class RunArtifact:
    id: int
    name: str
    size: int
    expired: bool


def get_run(forge: GitHubForge, run_id: int) -> SweepRun:
    path = f"/repos/{forge.slug}/actions/runs/{run_id}"
    shape = Shape(f"GET {path}")
    data = shape.obj(forge.rest.get_json(path), "the run")
    if shape.number(data, "id", "run") != run_id:
        raise shape.fail(f"asked for run {run_id}, GitHub answered for another run")
    head = shape.sha(data, "head_sha", "run")
    if not head:
        raise shape.fail("run.head_sha is not a commit id")
    pulls = data.get("pull_requests") or []
    numbers = tuple(
        p["number"]
        for p in pulls
        if isinstance(p, dict) and isinstance(p.get("number"), int) and p["number"] > 0
    )
    return SweepRun(
        run_id,
        head,
        str(data.get("head_branch") or ""),
        str(data.get("event") or ""),
        str(data.get("status") or ""),
        str(data.get("conclusion") or ""),
        numbers,
    )


def list_artifacts(forge: GitHubForge, run_id: int) -> list[RunArtifact]:
    path = f"/repos/{forge.slug}/actions/runs/{run_id}/artifacts"
    shape = Shape(f"GET {path}")
    out = []
    for found in forge.rest.paginate(path, key="artifacts"):
        item = shape.obj(found, "artifact")
        name = shape.text(item, "name", "artifact")
        if not name or "/" in name or name in (".", "..") or "\0" in name or "\\" in name:
            raise shape.fail(f"artifact name {name!r} is not a plain name")
        out.append(
            RunArtifact(
                shape.number(item, "id", "artifact"),
                name,
                shape.number(item, "size_in_bytes", "artifact"),
                bool(item.get("expired")),
            )
        )
    return out


def download(forge: GitHubForge, artifact: RunArtifact) -> bytes:
    """The artifact's zip: GitHub answers 302 to a signed URL on another host,
    fetched there without the token (https, or http on this machine's loopback)."""
    path = f"/repos/{forge.slug}/actions/artifacts/{artifact.id}/zip"
    answer = forge.rest.request("GET", path, redirect_ok=True)
    if answer.status_code < 300:
        return _capped(answer.content, path)
    location = answer.headers.get("location", "")
    parts = urlsplit(location)
    plain_ok = parts.scheme == "http" and (parts.hostname or "") in _LOOPBACK
    if (parts.scheme != "https" and not plain_ok) or not parts.hostname:
        raise ForgeError(
            f"GitHub GET {path}: redirected to {parts.scheme or '?'}://{parts.hostname or '?'}, "
            "not an https download",
            "check the API base URL",
        )
    origin = f"{parts.scheme}://{parts.netloc}"
    client = forge.rest.without_token(origin, max_bytes=MAX_ZIP_BYTES)
    try:
        target = parts._replace(scheme="", netloc="").geturl()
        return _capped(client.request("GET", target).content, path)
    finally:
        client.close()


def _capped(data: bytes, path: str) -> bytes:
    if len(data) > MAX_ZIP_BYTES:
        raise ForgeError(f"GitHub GET {path}: the artifact is over {MAX_ZIP_BYTES:,} bytes",
                         "download it yourself and use --artifacts DIR")  # fmt: skip
    return data


def unpack(data: bytes, name: str) -> dict[str, bytes]:
    """`<name>/<member>` -> bytes of the artifact's JSON members (what an
    import reads), refusing what could leave the folder or grow unbounded."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ForgeError(f"artifact {name}: not a zip ({exc})", "download it again") from None
    members = archive.infolist()
    if len(members) > MAX_MEMBERS:
        raise ForgeError(f"artifact {name}: more than {MAX_MEMBERS} files", "import it by hand")
    out: dict[str, bytes] = {}
    expanded = 0
    for member in members:
        path = member.filename
        parts = path.split("/")
        if member.is_dir():
            continue
        mode = member.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise ForgeError(f"artifact {name}: {path!r} is a symlink", "a result is a file")
        if path.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in path:
            raise ForgeError(f"artifact {name}: {path!r} is not a plain relative path",
                             "an artifact's files stay inside it")  # fmt: skip
        if not path.endswith(".json"):
            continue
        expanded += member.file_size
        if expanded > MAX_EXPANDED_BYTES:
            raise ForgeError(f"artifact {name}: over {MAX_EXPANDED_BYTES:,} bytes unpacked",
                             "import it by hand")  # fmt: skip
        with archive.open(member) as handle:
            content = handle.read(member.file_size + 1)
        if len(content) != member.file_size:
            raise ForgeError(f"artifact {name}: {path!r} is not the size its entry says",
                             "download it again")  # fmt: skip
        out[f"{name}/{path}"] = content
    return out
