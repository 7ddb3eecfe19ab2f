"""`gov queue run --ahead N`: a speculative train (docs/queue.md, 'Speculative
trains').

Before the front car lands, up to N+1 waiting cars get a candidate
(`merge.candidate`): the first on main's tip, each next one on the candidate
of the car before it. A candidate stays valid while the PR head is the one it
was built from and its base has the tree it was built on: after car 1 lands
(main then has exactly car 1's candidate tree) car 2's candidate is kept, and
after a refusal the cars behind are rebuilt on the nearest surviving
predecessor. The front car lands through prepare-merge (`queue.run_car`),
which refuses any tree but its candidate's.

A car refused on a predecessor's candidate is not refused yet (the car ahead
may still fail): a conflict outside the changelog that main does not have
parks it behind the first car ahead whose candidate it conflicts with, until
that car is done; any other failure defers it until it is the front car,
built on main. So the train lands what the sequential run lands.

Candidate commits are kept by `refs/gov/queue/pr-N`, recorded in the queue
database before the ref is made and released (ref deleted at the recorded
value, then forgotten) when rebuilt, when the car is done, at the end of the
pass, and at the start of the next one (what a killed run left).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from governance.check.sides import main_settings
from governance.core.crash import crash_point
from governance.core.diagnostics import GovError
from governance.core.settings import Settings
from governance.forge.base import Forge, PullRequest
from governance.git.repo import GitRepo
from governance.merge.candidate import (
    Built,
    NotBuilt,
    build,
    candidate_ref,
    conflicts_on,
    release,
    release_all,
)
from governance.merge.queue import (
    CarOptions,
    CarResult,
    LandCar,
    LandTested,
    RunResult,
    Say,
    Verify,
    prepare_tested_car,
    refusal_reason,
    run_car,
    utc_stamp,
)
from governance.merge.queue_store import Candidate, Car, CarState, QueueStore

# A killed run's `running` car first, then the queue's order.
WAITING: tuple[tuple[CarState, ...], ...] = (("running",), ("queued",))
Chain = list[tuple[Car, Candidate]]


def partial_land(land: LandTested, tree: str) -> LandCar:
    return lambda pr: land(pr, tree)


@dataclass
class Ahead:
    """One speculative pass (`queue.Speculate`), N cars built ahead of the front one."""

    repo: GitRepo
    store: QueueStore
    forge: Forge
    options: CarOptions
    cars: int
    now: Callable[[], str] = utc_stamp
    verify: Verify | None = None
    # Cars that failed on a predecessor's candidate: built again only as the front car.
    deferred: set[int] = field(default_factory=set)

    def __call__(self, result: RunResult, say: Say | None) -> None:
        release_all(self.repo, self.store)  # a killed run's candidates
        self.deferred.clear()  # each pass decides afresh (--watch: the train moved)
        try:
            self._pass(result, say)
        finally:
            release_all(self.repo, self.store)

    def _pass(self, result: RunResult, say: Say | None) -> None:
        seen: set[int] = set()
        land = prepare_tested_car(self.repo, self.options)

        def report(done: CarResult) -> None:
            result.cars.append(done)
            seen.add(done.pr)
            self.store.unpark_behind(done.pr)  # landed, refused or busy: retry its parked cars
            if say is not None:
                say(done)

        while True:
            if self.store.paused:  # read before every car, as the sequential train does
                result.paused = any(c.pr not in seen for c in self.store.cars(("queued",)))
                return
            movable = self._movable(seen)
            if not movable:
                return
            front = movable[0]
            pull = None if front.state == "running" else self.forge.get_pull(front.pr)
            if pull is None or pull.state != "open":
                # A killed run's car (prepare-merge recovers it from its journal), or
                # one merged or closed meanwhile: prepare-merge on main says what it is.
                report(run_car(self.repo, self.store, self.forge, partial_land(land, ""),
                               front, self.options.main_branch, self.now, self.verify))  # fmt: skip
                continue
            main_tip = self._main_tip()
            chain = self._chain(movable, pull, main_tip, report)
            if not chain or chain[0][0].pr != front.pr:
                continue  # the front car was refused: the train is read again
            car, held = chain[0]
            done = run_car(
                self.repo, self.store, self.forge, partial_land(land, held.tree), car,
                self.options.main_branch, self.now, self.verify,
            )  # fmt: skip
            release(self.repo, self.store, car.pr)
            if (
                done.outcome == "refused"
                and done.step == "commit"
                and (held.base != main_tip or self._main_tip() != main_tip)
            ):
                # Not the tested tree: the candidate was kept from a base with main's
                # tree but another history (the merge base may differ), or main moved
                # by hand. Built again on main itself before it is refused.
                self.store.requeue(car.pr, self.now())
                continue
            report(done)

    def _main_tip(self) -> str:
        return self.repo.ref_sha(f"refs/heads/{self.options.main_branch}") or ""

    def _movable(self, seen: set[int]) -> list[Car]:
        """The waiting cars in order (a killed run's `running` car first), but for
        those parked behind a car still waiting; a car whose blocker is done is
        unparked, to be retried now."""
        waiting = [
            car for states in WAITING for car in self.store.cars(states) if car.pr not in seen
        ]
        ahead = {car.pr for car in waiting}
        movable = []
        for car in waiting:
            if car.blocked_by and car.blocked_by in ahead:
                continue
            if car.blocked_by:
                self.store.unpark(car.pr)
            movable.append(car)
        if waiting and not movable:  # cannot happen (a blocker is built ahead); never stall
            for car in waiting:
                self.store.unpark(car.pr)
            return waiting
        return movable

    def _chain(self, movable: list[Car], front: PullRequest, main_tip: str, report: Say) -> Chain:
        """Candidates for the front car (its PR `front`, as just read) and up to N
        behind it, each on the one before."""
        settings = main_settings(
            self.repo, self.options.main_branch, self.options.overrides, remote=None
        )
        chain: Chain = []
        base, base_pr = main_tip, 0
        for car in movable:
            if len(chain) > self.cars:
                break
            if chain and car.pr in self.deferred:
                continue
            pull = front if car.pr == front.number else self.forge.get_pull(car.pr)
            if pull.state != "open":
                break  # its own turn will say what it is; nothing is built past it
            held = self._valid(car.pr, pull.head_sha, base)
            if held is None:
                release(self.repo, self.store, car.pr)
                outcome = build(self.repo, settings, self.forge, pull, base, settings.main_branch)
                if isinstance(outcome, NotBuilt):
                    self._not_built(car, pull, outcome, settings, main_tip, chain, report)
                    continue
                held = self._hold(car.pr, pull.head_sha, outcome, base, base_pr)
            chain.append((car, held))
            base, base_pr = held.sha, car.pr
        return chain

    def _valid(self, pr: int, head: str, base: str) -> Candidate | None:
        """The car's held candidate, if built from `head` on `base` or on a commit
        with `base`'s tree (the car ahead, landed as exactly its candidate)."""
        held = self.store.candidates(pr, held=True)
        if not held or held[-1].head != head:
            return None
        last = held[-1]
        same = last.base == base or self.repo.objects.tree_of(last.base) == (
            self.repo.objects.tree_of(base)
        )
        return last if same else None

    def _hold(self, pr: int, head: str, built: Built, base: str, base_pr: int) -> Candidate:
        """Record the candidate, then make its ref (so no ref is ever unrecorded)."""
        held = Candidate(pr, built.commit, built.tree, head, base, base_pr, candidate_ref(pr))
        self.store.add_candidate(held)
        if not self.repo.compare_and_swap_ref(held.ref, held.sha, None, f"gov: queue PR #{pr}"):
            raise GovError(
                f"{held.ref} exists but the queue database does not record it",
                f"inspect it, then `git update-ref -d {held.ref}` and re-run",
            )
        crash_point("queue-candidate")
        return held

    def _not_built(
        self,
        car: Car,
        pull: PullRequest,
        outcome: NotBuilt,
        settings: Settings,
        main_tip: str,
        chain: Chain,
        report: Say,
    ) -> None:
        """Refused on main: refused. On a predecessor's candidate: parked behind the
        car it conflicts with, or deferred until it is the front car."""
        if chain:
            blocker = self._blocker(settings, pull, main_tip, chain) if outcome.conflict else 0
            if blocker:
                self.store.park(car.pr, blocker)
            else:
                self.deferred.add(car.pr)
            return
        reason = refusal_reason(outcome.report)
        self.store.start(car.pr, self.now())
        self.store.refused(car.pr, outcome.step, reason, self.now())
        report(CarResult(car.pr, "refused", reason, outcome.step, report=outcome.report))

    def _blocker(self, settings: Settings, pull: PullRequest, main_tip: str, chain: Chain) -> int:
        """The first car ahead whose candidate the PR conflicts with (0: it
        conflicts on main too, or with no single one of them)."""
        if conflicts_on(self.repo, settings, pull, main_tip):
            return 0
        for car, held in chain:
            if conflicts_on(self.repo, settings, pull, held.sha):
                return car.pr
        return 0
