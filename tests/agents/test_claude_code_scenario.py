"""Scenarios through the installed hook command (``pmem hook claude-code EVENT``) and a
transcript in Claude Code's format; what each next session starts with is checked against what
was planted, and the count is printed.

- Three sessions build a bike-rental booking API. The person teaches rules two at a time, in
  English and Spanish, corrects the model with bare "No, así no", says "vale, sigue"; the
  model decides things that a compaction folds away and memorizes a fact; the second session
  crashes.
- A library's loans API, with ``.planning/`` committed and not: a session in the main
  checkout teaches, decides and memorizes; the next one runs in a linked worktree and
  crashes; a session restarts at once in the main checkout, then one more in the worktree;
  then a session starts in a second repository, which gets the person's own (personal)
  preference and none of the loans API's rules."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from claude_sessions import ClaudeCode, backdate, pmem

from planning_memory.memory import Memory

pytestmark = pytest.mark.slow  # real processes, long: `make test-slow`

IDS = (
    "b1ce0001-7a2b-4c3d-8e4f-5a6b7c8d9e01",
    "b1ce0002-7a2b-4c3d-8e4f-5a6b7c8d9e02",
    "b1ce0003-7a2b-4c3d-8e4f-5a6b7c8d9e03",
)
# what was planted: the words that show it reached the next session's context, and what the
# line holding them must also say (a rule reaches it as a taught rule, a decision as one)
PLANTED_IN_ONE = {
    "rule: pnpm": ("Always use pnpm.", "taught"),
    "rule: arrow functions": ("funciones flecha en los handlers", "taught"),
    "rule: no console.log": ("nunca uses console.log en producción", "taught"),
    "rule: no --no-verify": ("No hagas push con --no-verify.", "taught"),
    "goal": ("Goal: Let's add bike reservations to the rental API", ""),
    "decision before compaction": ("Postgres instead of Redis", "ecided"),
    "decision before compaction (es)": ("Cobramos por hora", "ecided"),
}
PLANTED_IN_TWO = {
    "rule: .env": ("Never commit .env files", "taught"),
    "rule: linter": ("always run the linter before pushing", "taught"),
    "memorized": ("Stripe holds the deposits", ""),
    "last words of the crashed session": ("Still need to email the receipt", ""),
}


def reached(context: str, words: str, also: str) -> bool:
    return any(words in line and also in line for line in context.splitlines())


def test_a_bike_rental_api_over_three_sessions(empty_repo: Path) -> None:
    repo = empty_repo
    (repo / "src").mkdir()
    (repo / "src" / "reservations.ts").write_text("export const reserve = () => {};\n", "utf-8")
    home = Path(os.environ["HOME"])

    one = ClaudeCode(repo, home, IDS[0])
    one.start()
    one.prompt("Always use pnpm. Let's add bike reservations to the rental API")
    one.say("Entendido, usaré pnpm. Understood, I'll look at the reservations module first.")
    one.tool("Read", {"file_path": str(repo / "src" / "reservations.ts")}, {"type": "text"})
    one.say("We'll use Postgres instead of Redis for reservations, so they survive restarts.")
    one.stop()
    one.prompt(
        "prefiero funciones flecha en los handlers. Y nunca uses console.log en producción. "
        "No hagas push con --no-verify."
    )
    one.say("Vale. He cambiado los handlers a funciones flecha.")
    one.stop()
    one.prompt("¿Cobramos por hora o por día?")
    one.say("Cobramos por hora: decidimos cobrar por hora, con un mínimo de una hora.")
    one.stop()
    for _ in range(2):  # bare corrections: nothing in them to learn
        one.prompt("No, así no")
        one.say("Perdona, lo rehago.")
        one.stop()
    one.prompt("Vale, sigue con el paso 2")
    one.say("Step 2 done: the availability check rejects overlapping bookings.")
    one.stop()
    one.compact("Reservations module in progress.")
    one.prompt("ok continue")
    one.say("Added the cancellation endpoint. Next: send the receipt email.")
    one.stop()
    one.end()

    two = ClaudeCode(repo, home, IDS[1])
    told_two = two.start()
    two.prompt("Never commit .env files and always run the linter before pushing")
    two.say("Understood. [MEMORIZE: Stripe holds the deposits, refunded on return]")
    two.stop()
    two.prompt("Sí, hazlo")
    two.say("Receipt template added. Still need to email the receipt after the return.")
    two.stop()
    backdate(repo, two, hours=2)  # the terminal was closed: no SessionEnd

    told_three = ClaudeCode(repo, home, IDS[2]).start()

    found = {name: reached(told_two, *fact) for name, fact in PLANTED_IN_ONE.items()}
    found |= {name: reached(told_three, *fact) for name, fact in PLANTED_IN_TWO.items()}
    print(f"\nscenario: facts reached {sum(found.values())} / planted {len(found)}")
    for name, ok in found.items():
        print(f"  {'reached' if ok else 'MISSED '}  {name}")
    assert all(found.values()), [name for name, ok in found.items() if not ok]

    mem = Memory(repo)
    [no_verify] = [m for m in mem.records("mistake") if "no-verify" in m["title"]]
    assert (no_verify["occurrences"], no_verify["severity"]) == (1, "medium")
    assert len(mem.records("mistake")) == 3  # console.log, --no-verify, .env: no "Así no"
    first = next(
        s
        for s in map(mem.sessions.get, (i.id for i in mem.sessions.list()))
        if s["name"] == f"claude-code {IDS[0]}"
    )
    summary = first["end_summary"]
    assert summary["goal"] == "Let's add bike reservations to the rental API"
    said = " ".join(summary["discoveries"] + summary["accomplished"])
    assert "Entendido" not in said and "Understood" not in said and "sigue" not in said
    assert [d["decision"] for d in first["decisions"]] == [
        "We'll use Postgres instead of Redis for reservations, so they survive restarts.",
        "Cobramos por hora: decidimos cobrar por hora, con un mínimo de una hora.",
    ]


# -- a crash, an immediate restart, a linked worktree ---------------------------------------------
LOANS = (
    "10a10001-7a2b-4c3d-8e4f-5a6b7c8d9e01",
    "10a10002-7a2b-4c3d-8e4f-5a6b7c8d9e02",
    "10a10003-7a2b-4c3d-8e4f-5a6b7c8d9e03",
    "10a10004-7a2b-4c3d-8e4f-5a6b7c8d9e04",
    "10a10005-7a2b-4c3d-8e4f-5a6b7c8d9e05",
)
IN_THE_WORKTREE = {  # what the first session (main checkout) planted, at the worktree's start
    "rule: pnpm": ("Always use pnpm.", "taught"),
    "rule: .env": ("Never commit .env files", "taught"),
    "goal": ("Goal: Let's add overdue fines to the loans API", ""),
    "decision": ("charge fines per day instead of per week", "ecided"),
    "memorized": ("Fines are capped at 20 euros", ""),
}
AT_ONCE_IN_MAIN = {  # what the crashed worktree session was doing, told to a restart at once
    "unfinished: goal": ("goal: Let's send reminder emails for overdue loans", "10a10002"),
    "unfinished: next step": ("schedule the reminders job at 08:00", "10a10002"),
    "rule: pnpm": ("Always use pnpm.", "taught"),
}
BACK_IN_THE_WORKTREE = {  # the main session's decision, and the worktree's unfinished work
    "decision (main)": ("renewals instead of new loans", "ecided"),
    "unfinished: goal": ("goal: Let's send reminder emails for overdue loans", "10a10002"),
}
IN_A_SECOND_REPOSITORY = {  # the person's own preference, saved as personal in the loans API
    "personal rule": ("Prefiero funciones flecha en los handlers", "taught"),
}


def git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com"}
    env |= {"GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


@pytest.mark.parametrize("committed", [True, False], ids=["committed", "untracked"])
def test_a_crash_then_a_restart_at_once_across_a_linked_worktree(
    tmp_path: Path, committed: bool
) -> None:
    main, linked = tmp_path / "loans", tmp_path / "loans-reminders"
    (main / "src").mkdir(parents=True)
    (main / "src" / "loans.ts").write_text("export const lend = () => {};\n", "utf-8")
    git(main, "init", "-q")
    Memory.init(main)
    if not committed:
        (main / ".git" / "info" / "exclude").write_text(".planning/\n", "utf-8")
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "loans API")
    home = Path(os.environ["HOME"])
    mine = ["save", "Prefiero funciones flecha en los handlers", "-t", "preference"]
    subprocess.run([*pmem(), *mine, "--scope", "personal"], cwd=main, check=True)

    one = ClaudeCode(main, home, LOANS[0])
    one.start()
    one.prompt("Always use pnpm. Never commit .env files. Let's add overdue fines to the loans API")
    one.say("We'll charge fines per day instead of per week, because librarians asked for it.")
    one.say("[MEMORIZE: Fines are capped at 20 euros per loan]")
    one.stop()
    one.end()
    git(main, "add", "-A")  # the rules and the fines code go in together
    git(main, "commit", "-q", "--allow-empty", "-m", "overdue fines")
    git(main, "worktree", "add", "-q", str(linked), "-b", "reminders")

    two = ClaudeCode(linked, home, LOANS[1])
    told_in_worktree = two.start()
    two.prompt("Let's send reminder emails for overdue loans")
    two.say("Reminder template written. Next: schedule the reminders job at 08:00.")
    # the terminal dies: no Stop, no SessionEnd; the person restarts in the main checkout

    three = ClaudeCode(main, home, LOANS[2])
    told_at_once = three.start()
    three.prompt("Let's fix the renewal limit")
    three.say("We'll count renewals instead of new loans, so the limit is 3 renewals.")
    three.stop()
    three.end()

    told_back = ClaudeCode(linked, home, LOANS[3]).start()

    shelf = tmp_path / "shelf"  # another app of the same person
    (shelf / "src").mkdir(parents=True)
    (shelf / "src" / "shelf.ts").write_text("export const shelve = () => {};\n", "utf-8")
    git(shelf, "init", "-q")
    git(shelf, "add", "-A")
    git(shelf, "commit", "-q", "-m", "shelf app")
    Memory.init(shelf)
    told_elsewhere = ClaudeCode(shelf, home, LOANS[4]).start()

    found = {name: reached(told_in_worktree, *f) for name, f in IN_THE_WORKTREE.items()}
    found |= {f"restart: {n}": reached(told_at_once, *f) for n, f in AT_ONCE_IN_MAIN.items()}
    found |= {f"back: {n}": reached(told_back, *f) for n, f in BACK_IN_THE_WORKTREE.items()}
    found |= {
        f"second repository: {n}": reached(told_elsewhere, *f)
        for n, f in IN_A_SECOND_REPOSITORY.items()
    }
    variant = ".planning/ committed" if committed else ".planning/ untracked"
    print(f"\n{variant}: facts reached {sum(found.values())} / planted {len(found)}")
    for name, ok in found.items():
        print(f"  {'reached' if ok else 'MISSED '}  {name}")
    assert all(found.values()), [name for name, ok in found.items() if not ok]
    assert "pnpm" not in told_elsewhere and "fines" not in told_elsewhere  # the loans API's
    sessions = Memory.open(main).sessions.list()
    assert len(sessions) == 4  # one place for the sessions of both checkouts
    assert Memory.open(linked).layout.short_term == Memory.open(main).layout.short_term
