"""Git integration: ignore rules, attributes, the merge driver, the staged secret scan, and
what a project is (its first commit: ``project_id``).

The record-level merge driver also settles rendered views (``viewmerge`` renders them from
the merged records); ``resolve`` (``repair``) repairs memory files after a merge without the
driver, and ``leftovers`` / ``unfinished`` find them (``pmem validate`` and the pre-commit
hook refuse a merge that left one). ``merge_copies`` is the same merge without a base, for
two copies of one file (an import). See docs/git.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planning_memory.core.exports import exports

if TYPE_CHECKING:
    from planning_memory.gitops.integration import InstallReport as InstallReport
    from planning_memory.gitops.integration import SecretHit as SecretHit
    from planning_memory.gitops.integration import install as install
    from planning_memory.gitops.integration import merge_driver as merge_driver
    from planning_memory.gitops.integration import scan_secrets as scan_secrets
    from planning_memory.gitops.integration import stage as stage
    from planning_memory.gitops.merge import merge_copies as merge_copies
    from planning_memory.gitops.project import project_id as project_id
    from planning_memory.gitops.project import project_ids as project_ids
    from planning_memory.gitops.repair import Leftover as Leftover
    from planning_memory.gitops.repair import Resolution as Resolution
    from planning_memory.gitops.repair import leftovers as leftovers
    from planning_memory.gitops.repair import resolve as resolve
    from planning_memory.gitops.repair import unfinished as unfinished

    __all__ = [
        "InstallReport",
        "Leftover",
        "Resolution",
        "SecretHit",
        "install",
        "leftovers",
        "merge_copies",
        "merge_driver",
        "project_id",
        "project_ids",
        "resolve",
        "scan_secrets",
        "stage",
        "unfinished",
    ]
else:
    __getattr__, __dir__, __all__ = exports(
        __name__,
        {
            "InstallReport": "integration",
            "Leftover": "repair",
            "Resolution": "repair",
            "SecretHit": "integration",
            "install": "integration",
            "leftovers": "repair",
            "merge_copies": "merge",
            "merge_driver": "integration",
            "project_id": "project",
            "project_ids": "project",
            "resolve": "repair",
            "scan_secrets": "integration",
            "stage": "integration",
            "unfinished": "repair",
        },
    )
