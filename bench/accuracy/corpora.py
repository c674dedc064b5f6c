"""The pinned corpora and the tools the harness compares against, fetched into the cache.

Every version and commit is pinned here. Fetching happens only at bench time, into
``~/.cache/pmem-bench/`` (``PMEM_BENCH_CACHE``), outside the repository: npm tarballs
(``npm pack``), PyPI sdists (``pip download``), GitHub trees (a local mirror when one exists,
else ``git fetch`` of the pinned commit), the TypeScript compiler with the type packages the
React corpora import (``npm install``) and universal-ctags (``apt-get``) when the installed
ctags is not universal-ctags.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CACHE = Path(os.environ.get("PMEM_BENCH_CACHE", Path.home() / ".cache" / "pmem-bench"))
# Where `git clone --mirror`-style copies may already be (owner+name/repo); the harness
# prefers one holding the pinned commit and otherwise fetches the commit from GitHub.
MIRRORS = Path(os.environ.get("PMEM_BENCH_MIRRORS", "/work/.mirror"))

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


class FetchError(RuntimeError):
    """A corpus or tool could not be fetched; the message says what and how to fix it."""


@dataclass(frozen=True)
class Corpus:
    name: str
    source: str  # "npm", "pypi" or "git"
    spec: str  # package@version, package==version, or owner/name
    commit: str = ""
    # compilerOptions written to tsconfig.json (the upstream project's, see TSCONFIGS)
    tsconfig: dict[str, Any] | None = None
    react: bool = False  # measured against the TypeScript compiler (components, imports)
    call_sample: int = 0  # call edges drawn for hand labels
    # languages whose call edges are scored against a type-aware reference (callref.py)
    reference: tuple[str, ...] = ()

    @property
    def root(self) -> Path:
        return CACHE / "corpora" / self.name


# The upstream projects' compiler options (react-native-paper v5.15.3's tsconfig.json; React
# Navigation's root tsconfig.json at @react-navigation/elements@2.9.39, flattened, without
# the monorepo's `paths`; react-hot-toast's tsconfig.json), minus options TypeScript 5.9
# does not know and `types` entries for test runners that are not installed. The published
# tarballs carry src/ but no tsconfig.
PAPER_TSCONFIG = {
    "baseUrl": ".",
    "paths": {
        "react-native-paper": ["./src/index"],
        "react-native-paper/react-navigation": ["./src/react-navigation"],
    },
    "esModuleInterop": True,
    "jsx": "react",
    "lib": ["esnext", "dom"],
    "moduleSuffixes": [".ios", ".native", ".android", ""],
    "module": "esnext",
    "moduleResolution": "node",
    "resolveJsonModule": True,
    "skipLibCheck": True,
    "strict": True,
    "target": "esnext",
}
ELEMENTS_TSCONFIG = {
    "esModuleInterop": True,
    "jsx": "react-jsx",
    "lib": ["esnext", "dom"],
    "module": "preserve",
    "moduleResolution": "bundler",
    "resolveJsonModule": True,
    "resolvePackageJsonImports": False,
    "skipLibCheck": True,
    "strict": True,
    "target": "esnext",
    "verbatimModuleSyntax": True,
}
HOT_TOAST_TSCONFIG = {
    "module": "esnext",
    "lib": ["dom", "esnext"],
    "rootDir": "./src",
    "strict": True,
    "moduleResolution": "node",
    "jsx": "react",
    "esModuleInterop": True,
    "skipLibCheck": True,
    "noEmit": True,
}

CORPORA = [
    Corpus("react-native-paper", "npm", "react-native-paper@5.15.4", "", PAPER_TSCONFIG, True),
    Corpus("rn-elements", "npm", "@react-navigation/elements@2.9.45", "", ELEMENTS_TSCONFIG, True),
    Corpus("react-hot-toast", "npm", "react-hot-toast@2.6.1", "", HOT_TOAST_TSCONFIG, True),
    Corpus(
        "realworld",
        "git",
        "gothinkster/react-redux-realworld-example-app",
        "ee72eba4056392c95a27bc48d385d3f54ba38a18",
        None,
        True,
    ),
    Corpus("rich", "pypi", "rich==15.0.0", call_sample=60),
    Corpus("attrs", "pypi", "attrs==26.1.0"),
    Corpus(
        "chi", "git", "go-chi/chi", "38939062c5df4d3e8814aad1a488983112627ced", call_sample=40
    ),  # v5.3.2
    Corpus("ripgrep", "git", "BurntSushi/ripgrep", "af60c2de9d85e7f3d81c78601669468cf02dabab"),
    # 15.1.0
    Corpus("javapoet", "git", "square/javapoet", "714e05ca60179285746604452324262b126dcb2d"),
    # javapoet-1.13.0
    # Call edges against each language's own type-aware tool, on code the harness was never
    # tuned on (no labels, no fixes drawn from it before it was measured):
    Corpus(
        "toml",
        "git",
        "BurntSushi/toml",
        "52534926c55b4cd85b05aee90569dd0668b8cf30",
        reference=("go",),
    ),  # v1.6.0, no dependencies: Go builds it without the module proxy
    Corpus(
        "commons-cli",
        "git",
        "apache/commons-cli",
        "d74613321325f6081fa0206c4ab608ab65d80e2e",
        reference=("java",),
    ),  # rel/commons-cli-1.11.0
    Corpus(
        "ky",
        "git",
        "sindresorhus/ky",
        "0a24c44fe4a15d0545c840facc56e473dd0b315b",
        reference=("typescript",),
    ),  # v2.0.2
    Corpus("click", "pypi", "click==8.1.8", reference=("python",)),
]

# The TypeScript compiler and the packages whose types the React corpora import, so the
# checker sees every props type whole (an unresolved import would turn an intersection into
# `any`, which has no properties).
NODE_PACKAGES = {
    "typescript": "5.9.3",
    "@types/react": "19.1.9",
    "react-native": "0.82.1",
    "react-native-safe-area-context": "5.6.1",
    "@react-navigation/native": "7.5.1",
    "@callstack/react-theme-provider": "3.0.9",
    "@types/color": "3.0.7",
    "use-latest-callback": "0.2.6",
    "use-sync-external-store": "1.5.0",
    "@types/use-sync-external-store": "1.5.0",
    "goober": "2.1.16",
    "csstype": "3.1.3",
}


def run(cmd: list[str], cwd: Path | None = None, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=ENV, text=True, capture_output=True, **kw)


def checked(cmd: list[str], what: str, cwd: Path | None = None) -> str:
    done = run(cmd, cwd)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise FetchError(f"{what} failed: `{' '.join(cmd)}`\n  " + "\n  ".join(tail))
    return done.stdout


def fetch(corpus: Corpus) -> Path:
    """The corpus' tree under the cache, a git repository with one commit (fetched once)."""
    root = corpus.root
    if (root / ".git").is_dir():
        return root
    shutil.rmtree(root, ignore_errors=True)
    downloads = CACHE / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    staging = root.with_name(root.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    {"npm": _npm, "pypi": _pypi, "git": _git}[corpus.source](corpus, downloads, staging)
    if corpus.tsconfig is not None:
        config = {"compilerOptions": corpus.tsconfig, "include": ["src"]}
        (staging / "tsconfig.json").write_text(json.dumps(config, indent=2) + "\n")
    checked(["git", "init", "-q"], "git init", staging)
    checked(["git", "add", "-A"], "git add", staging)
    checked(["git", "commit", "-q", "--no-verify", "-m", corpus.spec], "git commit", staging)
    staging.rename(root)
    return root


def _npm(corpus: Corpus, downloads: Path, out: Path) -> None:
    name = corpus.spec.rsplit("@", 1)[0].lstrip("@").replace("/", "-")
    version = corpus.spec.rsplit("@", 1)[1]
    tarball = downloads / f"{name}-{version}.tgz"
    if not tarball.exists():
        checked(["npm", "pack", corpus.spec, "--silent"], f"npm pack {corpus.spec}", downloads)
    with tarfile.open(tarball) as tar:
        members = [
            m
            for m in tar.getmembers()
            if m.name.startswith("package/src/") or m.name == "package/package.json"
        ]
        if not any(m.name.startswith("package/src/") for m in members):
            raise FetchError(f"{corpus.spec}: the published tarball has no src/ folder")
        tar.extractall(out.parent / "npm-extract", members=members, filter="data")
    extracted = out.parent / "npm-extract" / "package"
    for child in extracted.iterdir():
        child.rename(out / child.name)
    shutil.rmtree(out.parent / "npm-extract")


def _pypi(corpus: Corpus, downloads: Path, out: Path) -> None:
    name, version = corpus.spec.split("==")
    sdist = downloads / f"{name}-{version}.tar.gz"
    if not sdist.exists():
        checked(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-binary",
                ":all:",
                "--no-deps",
                "--quiet",
                "-d",
                str(downloads),
                corpus.spec,
            ],
            f"pip download {corpus.spec}",
        )
    with tarfile.open(sdist) as tar:
        tar.extractall(out.parent / "sdist-extract", filter="data")
    extracted = out.parent / "sdist-extract" / f"{name}-{version}"
    for child in extracted.iterdir():
        child.rename(out / child.name)
    shutil.rmtree(out.parent / "sdist-extract")


def _git(corpus: Corpus, downloads: Path, out: Path) -> None:
    owner, name = corpus.spec.split("/")
    gitdir = _git_dir_with(corpus.commit, MIRRORS / f"{owner}+{name}" / "repo")
    if gitdir is None:
        gitdir = downloads / f"{owner}+{name}.git"
        if _git_dir_with(corpus.commit, gitdir) is None:
            checked(["git", "init", "-q", "--bare", str(gitdir)], "git init --bare")
            url = f"https://github.com/{corpus.spec}"
            command = ["git", "--git-dir", str(gitdir), "fetch", "-q", "--depth", "1"]
            done = run([*command, url, corpus.commit])
            if done.returncode != 0:
                raise FetchError(
                    f"{corpus.spec}@{corpus.commit[:12]}: no local mirror at "
                    f"{MIRRORS / f'{owner}+{name}' / 'repo'} and `git fetch {url}` failed "
                    f"({done.stderr.strip()[-200:]}). Put a clone holding that commit there "
                    "(or point PMEM_BENCH_MIRRORS at a folder of <owner>+<name>/repo clones)."
                )
    archive = subprocess.run(
        ["git", "--git-dir", str(gitdir), "archive", corpus.commit],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)


def _git_dir_with(commit: str, gitdir: Path) -> Path | None:
    if not gitdir.is_dir():
        return None
    done = run(["git", "--git-dir", str(gitdir), "cat-file", "-e", f"{commit}^{{commit}}"])
    return gitdir if done.returncode == 0 else None


@dataclass
class Tools:
    ctags: str
    ctags_version: str
    node_modules: Path


def ctags() -> tuple[str, str]:
    """universal-ctags, installed with apt-get when the ctags on PATH is another one."""
    found = shutil.which("ctags")
    version = run([found, "--version"]).stdout if found else ""
    if "Universal" not in version:
        checked(["apt-get", "install", "-y", "universal-ctags"], "apt-get install universal-ctags")
        found = shutil.which("ctags")
        version = run([found, "--version"]).stdout if found else ""
        if "Universal" not in version:
            raise FetchError("universal-ctags is not on PATH after apt-get install")
    assert found is not None
    return found, version.splitlines()[0].split(",")[0].strip()


def node_modules() -> Path:
    """TypeScript and the type packages, under the cache (a parent of every corpus, so the
    compiler's node_modules look-up from a corpus file finds them)."""
    wanted = {"name": "pmem-bench-accuracy", "private": True, "dependencies": NODE_PACKAGES}
    manifest = CACHE / "package.json"
    modules = CACHE / "node_modules"
    stamp = modules / ".pmem-bench-installed"
    if stamp.exists() and stamp.read_text() == json.dumps(wanted, sort_keys=True):
        return modules
    CACHE.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps(wanted, indent=2) + "\n")
    checked(
        [
            "npm",
            "install",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--legacy-peer-deps",
            "--no-package-lock",
            "--loglevel=error",
        ],
        "npm install (typescript and type packages)",
        CACHE,
    )
    stamp.write_text(json.dumps(wanted, sort_keys=True))
    return modules


def tools() -> Tools:
    path, version = ctags()
    return Tools(path, version, node_modules())
