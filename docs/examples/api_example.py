"""The Python API around an agent run (seed 000's "Integración con Agentes").

Runs on its own: it creates a throw-away repository in a temporary folder, so it never touches
yours. In your project, ``Memory.open()`` finds the repository containing the working directory.

    .venv/bin/python docs/examples/api_example.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from planning_memory.memory import Memory


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        (repo / "src" / "lib").mkdir(parents=True)
        (repo / "src" / "lib" / "validation.ts").write_text("export const schema = 1;\n")
        Memory.init(repo)  # once per repository: `pmem init`

        memory = Memory.open(repo)
        memory.learn_pattern(
            "Validate request bodies with zod",
            "Every API route parses its body with a zod schema before use",
            "const body = LoginSchema.parse(await req.json())",
            tags=["validation", "api"],
        )
        memory.learn_from_mistake(
            "Returned raw database errors to the client",
            "Map them to HttpError with a safe message",
            "high",
        )

        # Before the agent runs: the memory context, then the task, within a token budget.
        task = {
            "description": "Add request validation to the login API route",
            "context": ["validation"],
            "files": ["src/lib/validation.ts"],
        }
        prompt = memory.prepare_agent_context("coder", task, budget=800)
        print(prompt)

        # After the agent ran: files, decisions and fixed errors go back into memory.
        done = memory.process_agent_result(
            "coder",
            {
                "filesModified": [
                    {"path": "src/lib/validation.ts", "purpose": "zod schemas for API bodies"}
                ],
                "decisions": [
                    {
                        "question": "Where do request schemas live?",
                        "decision": "src/lib/validation.ts, one schema per route",
                        "reasoning": "one place to review input rules",
                        "isPattern": True,
                        "patternName": "Request schemas live in src/lib/validation.ts",
                    }
                ],
                "errorsFixed": [
                    {
                        "original": "Login accepted an empty password",
                        "fix": "LoginSchema requires a non-empty password",
                        "severity": "high",
                    }
                ],
            },
        )
        print("recorded:", done)
        print("file entity:", memory.get_file_info("src/lib/validation.ts"))
        print("session:", memory.get_session_context()["files_accessed"])


if __name__ == "__main__":
    main()
