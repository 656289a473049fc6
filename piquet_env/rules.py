"""The rules object: every switch of RULES.md in one frozen dataclass, with named presets.

Two rule sets (``standard``, the default, and ``classic``, after Cavendish) and three variants that
combine with either: ``orbis`` (no exchange), ``saison`` (12 deals) and ``normand`` (33 cards with a
joker).

>>> make_rules("classic", variants=("normand", "saison")).name
'classic+saison+normand'
>>> make_rules("classic+orbis") == make_rules("classic", variants=["orbis"])
True
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields, replace

RULE_SETS = ("standard", "classic")
VARIANTS = ("orbis", "saison", "normand")


@dataclass(frozen=True)
class Rules:
    """Every rule switch. Build one with :func:`make_rules`; fields are documented inline.

    The defaults are the ``standard`` preset.
    """

    base: str = "standard"
    """The rule set the switches came from: ``'standard'`` or ``'classic'``."""
    variants: tuple[str, ...] = ()
    """The variants applied, in canonical order."""
    exchange: bool = True
    """False under ``orbis``: the dealt cards are played as dealt and the talon set aside unseen."""
    deals: int = 6
    """Deals in a partie (``saison``: 12). Must be even so each player deals equally often."""
    joker: bool = False
    """``normand``: a 33rd card, the joker, strongest in play and in no combination."""
    elder_max_exchange: int = 5
    """Most cards elder may exchange (he must exchange at least 1)."""
    younger_min_exchange: int = 0
    """Fewest cards younger must exchange (``classic``: 1)."""
    younger_max_exchange: int | None = 3
    """Most cards younger may exchange; ``None`` means all the cards left in the talon
    (``classic``)."""
    carte_blanche: bool = False
    """``classic``: a dealt hand without K, Q or J scores 10 at once and is shown."""
    trick_scoring: str = "standard"
    """``'standard'``: 1 per lead, 1 per trick won, last trick 2, capot replaces trick points.
    ``'classic'``: 1 per lead, 1 per trick won that the opponent led, last trick +1, 10 for the
    cards (7+ tricks), capot replaces the 10."""
    repique_reckoning: str = "standard"
    """``'standard'``: repique needs the opponent's declarations to total 0. ``'classic'``: counted
    in reckoning order (carte blanche, point, sequence, set)."""
    settlement: str = "standard"
    """``'standard'`` or ``'classic'`` rubicon settlement (RULES.md section 8)."""
    tie_break_deals: bool = False
    """``classic``: equal totals after the partie are played off with two more deals."""

    def __post_init__(self) -> None:
        if self.base not in RULE_SETS:
            raise ValueError(f"unknown rule set {self.base!r}; expected one of {RULE_SETS}")
        for v in self.variants:
            if v not in VARIANTS:
                raise ValueError(f"unknown variant {v!r}; expected some of {VARIANTS}")
        for name, allowed in (
            ("trick_scoring", RULE_SETS),
            ("repique_reckoning", RULE_SETS),
            ("settlement", RULE_SETS),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.deals < 2 or self.deals % 2:
            raise ValueError(f"deals must be a positive even number, got {self.deals}")
        if not 1 <= self.elder_max_exchange <= 5:
            raise ValueError(f"elder_max_exchange must be 1..5, got {self.elder_max_exchange}")
        ymax = self.younger_max_exchange
        if ymax is not None and not 0 <= ymax <= self.younger_part:
            raise ValueError(
                f"younger_max_exchange must be 0..{self.younger_part} or None, got {ymax}"
            )
        if self.younger_min_exchange < 0 or (ymax is not None and self.younger_min_exchange > ymax):
            raise ValueError(
                f"younger_min_exchange {self.younger_min_exchange} is outside "
                "0..younger_max_exchange"
            )

    @property
    def name(self) -> str:
        """Preset name: the rule set then its variants, joined by ``+``."""
        return "+".join((self.base, *self.variants))

    @property
    def n_cards(self) -> int:
        """Cards in the pack: 32, or 33 with the joker."""
        return 33 if self.joker else 32

    @property
    def talon_size(self) -> int:
        """Cards left after dealing 12 to each player."""
        return self.n_cards - 24

    @property
    def elder_part(self) -> int:
        """Cards of the talon reserved for elder (the top 5)."""
        return 5

    @property
    def younger_part(self) -> int:
        """Cards of the talon reserved for younger (the bottom 3, or 4 under ``normand``)."""
        return self.talon_size - 5

    def to_dict(self) -> dict:
        """JSON-serializable form; :meth:`from_dict` reverses it."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["variants"] = list(self.variants)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Rules:
        """Rebuild rules from :meth:`to_dict` output; unknown keys are an error."""
        known = {f.name for f in fields(cls)}
        bad = set(d) - known
        if bad:
            raise ValueError(f"unknown rule options: {sorted(bad)}")
        d = dict(d)
        if "variants" in d:
            d["variants"] = tuple(d["variants"])
        return cls(**d)


STANDARD = Rules()
CLASSIC = Rules(
    base="classic",
    younger_min_exchange=1,
    younger_max_exchange=None,
    carte_blanche=True,
    trick_scoring="classic",
    repique_reckoning="classic",
    settlement="classic",
    tie_break_deals=True,
)


def make_rules(preset: str | Rules = "standard", variants: Iterable[str] = ()) -> Rules:
    """Rules for a rule set plus variants, e.g. ``make_rules("classic", ["normand"])``.

    ``preset`` may itself carry variants joined by ``+`` (``"standard+orbis"``), or be a
    :class:`Rules` (returned as is when no variants are added). Unknown names and repeated variants
    raise ``ValueError``; ``variants`` may also be one ``+``-joined string (``"orbis+saison"``).
    """
    if isinstance(preset, Rules):
        base_rules, extra = preset, list(preset.variants)
    else:
        if not isinstance(preset, str):
            raise TypeError(f"rules preset must be a name or Rules, got {type(preset).__name__}")
        head, *extra = [p.strip().lower() for p in preset.split("+")]
        if head not in RULE_SETS:
            raise ValueError(f"unknown rules preset {head!r}; expected one of {RULE_SETS}")
        base_rules = STANDARD if head == "standard" else CLASSIC
    if isinstance(variants, str):
        variants = [v for v in variants.split("+") if v.strip()]
    elif not isinstance(variants, Iterable):
        raise ValueError(f"variants must be a list of names such as ['orbis'], got {variants!r}")
    for v in variants:
        if not isinstance(v, str):
            raise ValueError(f"a variant is a name such as 'orbis', got {v!r}")
    names = extra + [v.strip().lower() for v in variants]
    for v in names:
        if v not in VARIANTS:
            raise ValueError(f"unknown variant {v!r}; expected some of {VARIANTS}")
    if len(set(names)) != len(names):
        raise ValueError(f"variant given twice in {names}")
    if isinstance(preset, Rules) and names == list(preset.variants):
        return preset
    base_rules = replace(base_rules, variants=())
    changes: dict = {"variants": tuple(v for v in VARIANTS if v in names)}
    if "orbis" in names:
        changes["exchange"] = False
    if "saison" in names:
        changes["deals"] = 12
    if "normand" in names:
        changes["joker"] = True
    return replace(base_rules, **changes)


def all_presets() -> list[Rules]:
    """Every rule set with every combination of variants (16 rule objects)."""
    out = []
    for base in RULE_SETS:
        for bits in range(8):
            out.append(make_rules(base, [v for i, v in enumerate(VARIANTS) if bits >> i & 1]))
    return out
