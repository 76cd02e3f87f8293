"""`--baseline REF`: the scenario before the change read from git, as the candidate's own files were at that
commit (`origin/main`, `HEAD~1`, a tag, a SHA).

An entry of `--baseline` that is a file or a folder is read as it is; any other is a git ref, resolved in the
repository holding the candidate's files (`git rev-parse --verify REF^{commit}`). The candidate's files and
folders (`-f`) are taken from that commit with `git archive` (only what they name), into a folder of the
caller's, and read as the baseline; a file the commit does not have yet is a file the change adds: the baseline
goes without it. Findings name such a file `REF:path`.

A CI checkout is often shallow (`actions/checkout` fetches one commit): a ref it does not have, named
`<remote>/<branch>`, is fetched (one commit deep: what the baseline reads), and when that fails the message says
how to get it (`fetch-depth: 0`, or the `git fetch` to run).
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from collections.abc import Callable, Sequence
from pathlib import Path

from kubefit.errors import InputError

OPTION = "--baseline"


def _git(args: Sequence[str], cwd: str, *, binary: bool = False) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=not binary, timeout=300,
                              check=False)
    except FileNotFoundError:
        raise InputError("is not a file or folder, and git (to read it as a git ref) is not installed",
                         field=OPTION) from None
    except subprocess.TimeoutExpired:
        raise InputError(f"git {' '.join(args)} did not finish within 300 s", field=OPTION) from None


def _first_line(text: str | bytes) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0].strip() if lines else ""


def is_ref_entry(entry: str) -> bool:
    """An entry of `--baseline` that is no file or folder (nor stdin): a git ref."""
    return entry != "-" and not Path(entry).exists()


def toplevel(files: Sequence[str]) -> str:
    """The work tree of the git repository holding the candidate's files (all of them)."""
    if "-" in files:
        raise InputError("a git ref reads the candidate's files as they were at that commit: give -f files, not "
                         "standard input", field=OPTION)
    start = str(Path(files[0]).resolve().parent if Path(files[0]).is_file() else Path(files[0]).resolve())
    found = _git(["rev-parse", "--show-toplevel"], start)
    if found.returncode != 0:
        raise InputError(f"is read as a git ref, but {files[0]} is not in a git repository ({_first_line(found.stderr)})",
                         field=OPTION)
    root = found.stdout.strip()
    for f in files:
        if os.path.commonpath([root, str(Path(f).resolve())]) != str(Path(root).resolve()):
            raise InputError(f"is read as a git ref, but {f} is not in the repository {root}", field=OPTION)
    return root


def resolve_ref(ref: str, root: str) -> str:
    """The commit `ref` names in the repository at `root` (fetched first from its remote when a shallow clone
    lacks it), or the error saying what to do."""
    def commit() -> str | None:
        found = _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], root)
        return found.stdout.strip() if found.returncode == 0 else None

    sha = commit()
    if sha is not None:
        return sha
    shallow = _git(["rev-parse", "--is-shallow-repository"], root).stdout.strip() == "true"
    remote, _, branch = ref.partition("/")
    remotes = _git(["remote"], root).stdout.split()
    fetch = f"git fetch --no-tags --depth=1 {remote} +refs/heads/{branch}:refs/remotes/{remote}/{branch}"
    if remote in remotes and branch:
        _git(fetch.split()[1:], root)
        sha = commit()
        if sha is not None:
            return sha
    if shallow:
        how = (f"run `{fetch}` first, or " if remote in remotes and branch else "")
        raise InputError(f"{ref} is not a file or folder, nor a commit of this shallow clone (actions/checkout "
                         f"fetches one commit): {how}check out with `fetch-depth: 0`", field=OPTION)
    raise InputError(f"{ref} is neither a file or folder nor a git commit of {root}", field=OPTION)


def extract(ref: str, files: Sequence[str], into: Path) -> tuple[list[str], dict[str, str]]:
    """The candidate's `files` as they are at `ref`, written under `into`: their paths there (those the commit
    has), and each path's name for findings (`REF:path`)."""
    root = toplevel(files)
    sha = resolve_ref(ref, root)
    wanted = [os.path.relpath(Path(f).resolve(), Path(root).resolve()) for f in files]
    present = [w for w in wanted if _git(["ls-tree", "--name-only", sha, "--", w], root).stdout.strip()]
    if not present:
        raise InputError(f"{ref} has none of {', '.join(files)}: nothing to compare with", field=OPTION)
    archive = _git(["archive", "--format=tar", sha, "--", *present], root, binary=True)
    if archive.returncode != 0:
        raise InputError(f"git archive {ref}: {_first_line(archive.stderr)}", field=OPTION)
    target = into / ref.replace("/", "_")
    safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # Python 3.11.4+: no path leaves `target`
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(target, **safe)
    out = [str(target / w) for w in present]
    names = {str(target / w): f"{ref}:{w}" for w in present}
    return out, names


def baseline_files(entries: Sequence[str], files: Sequence[str], into: Path) -> tuple[list[str], dict[str, str]]:
    """The baseline's files: each entry that is a file or folder as given, each git ref extracted (see
    `extract`); and the names findings give the extracted ones."""
    out: list[str] = []
    names: dict[str, str] = {}
    for entry in entries:
        if not is_ref_entry(entry):
            out.append(entry)
            continue
        paths, named = extract(entry, files, into)
        out += paths
        names.update(named)
    return out, names


def renamer(names: dict[str, str]) -> Callable[[str], str]:
    """A file's name for findings: an extracted file as `REF:path` (a file under an extracted folder too)."""
    def rename(path: str) -> str:
        for prefix, name in names.items():
            if path == prefix or path.startswith(prefix + os.sep):
                return name + path[len(prefix):]
        return path
    return rename
