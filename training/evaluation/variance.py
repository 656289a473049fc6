"""Fewer games for the same certainty: AIVAT's chance correction at the talon.

Duplicate deals cancel the luck of the cards the two games of a pair share. What they cannot
cancel is luck that meets the agents' own choices: in one game A keeps a hand and draws the
talon's top cards onto it, in the other B, in the same seat, keeps another hand and draws the
same cards, and the talon fits one hand better than the other. AIVAT (Burch, Schmid, Moravčík,
Morrill and Bowling, "AIVAT: a new variance reduction technique for agent evaluation in
imperfect information games", AAAI 2018) removes such luck with control variates whose
expectation is zero by construction.

Here the chance event is the talon's order at each deal's elder's draw: the first moment it
matters. Nothing before depends on it (the pack is shuffled uniformly, the hands are dealt
from it, and no agent sees the talon before drawing from it), so given everything before the
draw, the order is uniform over the orders of the talon's cards. For any value function ``u``
of the state, the term

    u(the state after the draw) - E_order[u(the state after the draw with that order)]

therefore has expectation zero, and a game's points minus the sum of its terms (one per deal)
is an unbiased estimate of the same mean. The expectation runs over the 8! orders: it is
estimated by the mean over ``samples`` orders drawn from a stream of their own (an unbiased
estimate of it, so the corrected points stay unbiased). Both games of a pair draw the *same*
sampled orders (common random numbers, keyed by the pair and the deal): where the two agents
exchanged alike, the two games' terms then cancel exactly, as their points do, instead of adding
the sampling's noise. How good ``u`` is decides only how much variance goes, never the mean.

``u`` is a trained critic (:class:`TalonCorrection`): by default that of the shipped
``baseline`` of the rules (its full-state critic), its value for the player to act after the
draw, signed for agent A and converted to points by its run's reward scale. Nothing here
corrects the agents' own choices (AIVAT's action terms need each agent's action probabilities;
the agents judged here are mostly deterministic, for which those terms are zero), and under
``orbis`` (no exchange) there is no draw to correct.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from piquet_env.agent import Agent
from piquet_env.game import Game
from piquet_env.game.state import Phase
from piquet_env.observation import encoder_for
from piquet_env.rules import Rules

__all__ = ["DEFAULT_SAMPLES", "TalonCorrection", "VarianceReductionError", "correction_for"]

DEFAULT_SAMPLES = 16
"""Talon orders drawn per correction to estimate its expectation."""


class VarianceReductionError(ValueError):
    """A value function that cannot serve (no critic, other rules, no reward scale)."""


_LOADED: dict[tuple[str, str], TalonCorrection] = {}


def correction_for(value: str | None, rules: Rules) -> TalonCorrection | None:
    """The correction of value function ``value`` (a policy checkpoint spec) under ``rules``,
    loaded once per process (:meth:`TalonCorrection.load`); ``None`` for none."""
    if not value:
        return None
    key = (value, rules.name)
    if key not in _LOADED:
        _LOADED[key] = TalonCorrection.load(value, rules)
    return _LOADED[key]


class TalonCorrection:
    """The correction terms of one game (see the module docstring), in agent A's points.

    ``model`` is an actor-critic whose critic reads the full state (``state_size > 0``) or the
    observation; ``points_per_value`` converts its values to points (the inverse of its run's
    ``reward_scale``); ``samples`` orders estimate each expectation.
    """

    def __init__(
        self,
        model: object,
        rules: Rules,
        points_per_value: float,
        samples: int = DEFAULT_SAMPLES,
        name: str = "value",
    ) -> None:
        if samples < 1:
            raise VarianceReductionError(f"samples must be at least 1, got {samples!r}")
        self.model, self.rules, self.samples, self.name = model, rules, int(samples), name
        self.points_per_value = float(points_per_value)
        self.enc = encoder_for(rules)
        self._full = bool(getattr(model, "state_size", 0))

    @classmethod
    def load(cls, spec: str, rules: Rules, samples: int = DEFAULT_SAMPLES) -> TalonCorrection:
        """The critic of policy checkpoint ``spec`` (a path, a run directory or ``baseline``, the
        rules' shipped one) for ``rules``; :class:`VarianceReductionError` says why one cannot
        serve."""
        from piquet_agents.checkpoint import load_policy, read_checkpoint
        from piquet_agents.registry import spec_files

        files = spec_files(spec, rules)
        if not files:
            raise VarianceReductionError(
                f"value {spec!r}: no policy checkpoint for the rules {rules.name!r} "
                "(give a checkpoint path or run directory whose critic values the states)"
            )
        try:
            model, _ = load_policy(files[0], rules=rules)
            config = read_checkpoint(files[0], rules=rules).meta.get("config") or {}
        except ValueError as exc:
            raise VarianceReductionError(f"value {spec!r}: {exc}") from None
        scale = config.get("reward_scale")
        if not isinstance(scale, (int, float)) or not scale > 0:
            raise VarianceReductionError(
                f"value {spec!r}: its checkpoint does not record a positive reward_scale, so its "
                "values cannot be read as points"
            )
        return cls(model, rules, 1.0 / float(scale), samples, name=Path(files[0]).name)

    def play(self, game: Game, seats: Sequence[Agent], seat_a: int, key: str) -> float:
        """Play ``game`` to its end (as :func:`piquet_agents.loop.play_game`) and return the sum
        of its correction terms, in A's points (A sits at ``seat_a``). ``key`` names the stream
        of the sampled talon orders (with the deal's number; give both games of a pair the same
        key); it draws nothing else."""
        from piquet_agents.loop import play_turn

        total = 0.0
        while game.current_player >= 0:
            e = game.elder
            drawing = (
                game.phase is Phase.EXCHANGE and game.current_player == e and not game.exchanged[e]
            )
            before = game.clone() if drawing else None
            action = play_turn(game, seats)
            if before is not None and game.deal_number == before.deal_number and game.exchanged[e]:
                total += self.term(before, action, game, seat_a, f"{key} {before.deal_number}")
        return total

    def term(self, before: Game, action: int, after: Game, seat_a: int, key: str) -> float:
        """One correction: ``u(after) - mean u(after with a sampled order)``, where ``before`` is
        the game just before the elder's last exchange action ``action`` (the one that draws),
        ``after`` the game just after it and ``key`` seeds the sampled orders (permutations of
        the talon's positions)."""
        if after.current_player < 0:
            return 0.0
        states = [after]
        for order in self.orders(before.talon, key):
            g = before.clone()
            g.record = False
            g.talon = order
            g.apply(action)
            states.append(g)
        u = self.values(states, seat_a)
        return float(u[0] - u[1:].mean())

    def orders(self, talon: Sequence[int], key: str) -> list[list[int]]:
        """``samples`` orders of the cards of ``talon``, each uniform over all orders, from the
        stream ``key`` (a permutation of the positions each: the same key gives the same
        permutations, whatever the cards)."""
        rng, n = random.Random(key), len(talon)
        return [[talon[i] for i in rng.sample(range(n), n)] for _ in range(self.samples)]

    def values(self, games: Sequence[Game], seat_a: int) -> np.ndarray:
        """``u`` of each game, in A's points: the critic's value for the player to act, signed
        for A."""
        n = len(games)
        width = self.enc.state_size if self._full else self.enc.size
        read = np.zeros((n, width), dtype=np.float32)
        sign = np.empty(n, dtype=np.float32)
        for i, g in enumerate(games):
            p = g.current_player
            if self._full:
                self.enc.state_into(g, p, read[i])
            else:
                self.enc.encode_into(g, p, read[i])
            sign[i] = 1.0 if p == seat_a else -1.0
        import torch

        with torch.inference_mode():
            v = self.model.values(torch.from_numpy(read)).double().numpy()  # type: ignore[attr-defined]
        return sign * v * self.points_per_value
