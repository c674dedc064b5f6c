"""Git integration: ignore rules, attributes, the merge driver and the staged secret scan.

The record-level merge driver also settles rendered views (``viewmerge`` renders them from
the merged records); ``resolve`` repairs conflicted
memory files after a merge without the driver. See docs/git.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planning_memory.core.exports import exports

if TYPE_CHECKING:
    from planning_memory.gitops.integration import InstallReport as InstallReport
    from planning_memory.gitops.integration import Resolution as Resolution
    from planning_memory.gitops.integration import SecretHit as SecretHit
    from planning_memory.gitops.integration import install as install
    from planning_memory.gitops.integration import merge_driver as merge_driver
    from planning_memory.gitops.integration import resolve as resolve
    from planning_memory.gitops.integration import scan_secrets as scan_secrets
    from planning_memory.gitops.integration import stage as stage

    __all__ = [
        "InstallReport",
        "Resolution",
        "SecretHit",
        "install",
        "merge_driver",
        "resolve",
        "scan_secrets",
        "stage",
    ]
else:
    __getattr__, __dir__, __all__ = exports(
        __name__,
        {
            "InstallReport": "integration",
            "Resolution": "integration",
            "SecretHit": "integration",
            "install": "integration",
            "merge_driver": "integration",
            "resolve": "integration",
            "scan_secrets": "integration",
            "stage": "integration",
        },
    )
