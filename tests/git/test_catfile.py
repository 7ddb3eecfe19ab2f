"""Many objects read in one pass (`CatFile.contents_of`): the same bytes as
one `git cat-file blob` each, across chunks, with blobs larger than a pipe
and a missing object in the middle."""

from __future__ import annotations

from collections.abc import Callable

from governance.git.catfile import _CHUNK, CatFile
from tests.harness import Repo


def test_many_blobs_in_one_pass_are_what_git_says(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo()
    files = {f"f{k:03}.txt": f"file {k}\n" * (k % 7) for k in range(_CHUNK + 40)}
    files["big.bin"] = "x" * 300_000  # larger than a pipe's buffer
    for name, text in files.items():
        repo.write(name, text)
    repo.commit("many files")
    shas = [repo.git("rev-parse", f"HEAD:{name}") for name in files]
    shas.insert(5, "0" * 40)  # missing: None, and the rest still line up
    found = CatFile(repo.path).contents_of(shas)
    assert found[5] is None
    del found[5], shas[5]
    assert len(found) == len(files) > _CHUNK
    for name, data in zip(files, found, strict=True):
        assert data == files[name].encode(), name
