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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from functools import cached_property
from types import MappingProxyType

RULE_SETS = ("standard", "classic")
VARIANTS = ("orbis", "saison", "normand", "mini")


MAX_PARTIE_DEALS = 20
"""The most deals a partie may play, tie-break deals included: the game keeps totals up to 5,000
(``piquet_env.game.scoring.MAX_TOTAL``) and a deal scores at most 250
(``MAX_DEAL_POINTS``); ``tests/test_rules.py`` checks the two agree."""

STANDARD_YOUNGER_MAX = 3
"""Younger's most under the standard rules (RULES.md section 4): always accepted as a limit."""


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
    suits: int = 4
    """Suits in the pack, the first of C D H S (``mini``: 3, clubs, diamonds and hearts)."""
    ranks: int = 8
    """Ranks of each suit in the pack, the highest kept (8: 7 up to A; ``mini``: 3, Q K A)."""
    hand_size: int = 12
    """Cards dealt to each player, and so tricks in a deal (``mini``: 4)."""
    elder_part: int = 5
    """Cards of the talon reserved for elder, from the top (``mini``: 1, the whole talon);
    younger's part is the rest."""
    elder_max_exchange: int = 5
    """Most cards elder may exchange (he must exchange at least 1), at most his part."""
    younger_min_exchange: int = 0
    """Fewest cards younger must exchange (``classic``: 1)."""
    younger_max_exchange: int | None = 3
    """Most cards younger may exchange, at most the cards left in the talon; ``None`` means all
    of them (``classic``). A limit above 3 must be reachable: at most the cards left after elder
    takes his most (``ValueError`` otherwise)."""
    carte_blanche: bool = False
    """``classic``: a dealt hand without K, Q or J scores 10 at once and is shown."""
    trick_scoring: str = "standard"
    """``'standard'``: 1 per lead, 1 per trick won, last trick 2, capot replaces trick points.
    ``'classic'``: 1 per lead, 1 per trick won that the opponent led, last trick +1, 10 for the
    cards (more than half the tricks: 7+ of 12), capot replaces the 10."""
    repique_reckoning: str = "standard"
    """``'standard'``: repique needs the opponent's declarations to total 0. ``'classic'``: counted
    in reckoning order (carte blanche, point, sequence, set)."""
    settlement: str = "standard"
    """``'standard'`` or ``'classic'`` rubicon settlement (RULES.md section 8)."""
    tie_break_deals: bool = False
    """``classic``: equal totals after the partie are played off with two more deals."""

    def __copy__(self) -> Rules:
        """The rules themselves: they are immutable (frozen; the cached properties are derived
        from the fields), so a copy, as of an int, is the object itself."""
        return self

    def __deepcopy__(self, memo: dict) -> Rules:
        """The rules themselves (see :meth:`__copy__`): a deep copy of a game's state, as a
        search makes at every node (OpenSpiel's ``child``), leaves them shared."""
        return self

    def __post_init__(self) -> None:
        for f in fields(self):
            _check_type(f.name, getattr(self, f.name), _FIELD_TYPES[f.name])
        if self.base not in RULE_SETS:
            raise ValueError(f"unknown rule set {self.base!r}; expected one of {RULE_SETS}")
        for v in self.variants:
            if v not in VARIANTS:
                raise ValueError(f"unknown variant {v!r}; expected some of {VARIANTS}")
        if self.variants != tuple(v for v in VARIANTS if v in self.variants):
            raise ValueError(
                f"variants must be given once each, in the order {VARIANTS}, got {self.variants}"
            )
        for name in ("trick_scoring", "repique_reckoning", "settlement"):
            if getattr(self, name) not in RULE_SETS:
                raise ValueError(f"{name} must be one of {RULE_SETS}, got {getattr(self, name)!r}")
        if self.deals < 2 or self.deals % 2:
            raise ValueError(f"deals must be a positive even number, got {self.deals}")
        most = MAX_PARTIE_DEALS - (2 if self.tie_break_deals else 0)
        if self.deals > most:
            raise ValueError(
                f"deals must be at most {most} (a partie's totals must stay within the largest "
                f"the game keeps: {MAX_PARTIE_DEALS} deals, tie-break deals included), got "
                f"{self.deals}"
            )
        if not 1 <= self.suits <= 4:
            raise ValueError(f"suits must be 1..4, got {self.suits}")
        if not 1 <= self.ranks <= 8:
            raise ValueError(f"ranks must be 1..8, got {self.ranks}")
        if self.hand_size < 1 or 2 * self.hand_size >= self.pack_size:
            raise ValueError(
                f"hand_size must be 1..{(self.pack_size - 1) // 2} (two hands from the "
                f"{self.pack_size}-card pack, and a talon of at least one card), got "
                f"{self.hand_size}"
            )
        if not 0 <= self.elder_part <= self.talon_size:
            raise ValueError(
                f"elder_part must be 0..{self.talon_size} (the talon's size), got {self.elder_part}"
            )
        if self.exchange and self.elder_part < 1:
            raise ValueError("elder_part must be at least 1 with an exchange: elder exchanges 1+")
        if not 1 <= self.elder_max_exchange <= 5:
            raise ValueError(f"elder_max_exchange must be 1..5, got {self.elder_max_exchange}")
        ymax = self.younger_max_exchange
        if ymax is not None and ymax < 0:
            raise ValueError(f"younger_max_exchange must be at least 0 or None, got {ymax}")
        if self.younger_min_exchange < 0 or (ymax is not None and self.younger_min_exchange > ymax):
            raise ValueError(
                f"younger_min_exchange {self.younger_min_exchange} is outside "
                "0..younger_max_exchange"
            )
        if self.younger_min_exchange > self.hand_size:
            raise ValueError(
                f"younger_min_exchange {self.younger_min_exchange} is more than the "
                f"{self.hand_size} cards of a hand: younger could not discard them"
            )
        self._check_younger_limits()

    def _check_younger_limits(self) -> None:
        """Younger's limits against the talon (RULES.md section 4): he takes from what elder
        leaves, so a limit above the standard 3 must be one he can reach, at most the cards left
        after elder takes his most; for more, ``None`` (all that remain, as ``classic``). A limit
        of 3 or less holds on any pack (the talon caps it, as it caps elder's 5 under ``mini``)."""
        elder_most = min(self.elder_max_exchange, self.elder_part)
        left = self.talon_size - elder_most
        most = max(STANDARD_YOUNGER_MAX, left)
        for name in ("younger_max_exchange", "younger_min_exchange"):
            value = getattr(self, name)
            if value is not None and value > most:
                raise ValueError(
                    f"{name} must be at most {most}, got {value}: after elder takes his most "
                    f"({elder_most} of the {self.talon_size}-card talon) {left} cards are left "
                    "for younger (younger_max_exchange=None lets him take all that remain)"
                )

    @cached_property
    def name(self) -> str:
        """Preset name: the rule set then its variants, joined by ``+``, then, for rules built
        field by field, the fields that differ from that preset in brackets
        (``'standard+mini[suits=2,hand_size=2]'``): :func:`make_rules` reads every name back."""
        preset = "+".join((self.base, *self.variants))
        plain = make_rules(preset)
        changed = [
            f"{f.name}={_field_text(getattr(self, f.name))}"
            for f in fields(self)
            if f.name not in ("base", "variants")
            and getattr(self, f.name) != getattr(plain, f.name)
        ]
        return f"{preset}[{','.join(changed)}]" if changed else preset

    @property
    def n_cards(self) -> int:
        """Card ids of the action space: 32, or 33 with the joker (id 32). A smaller pack's
        cards keep their ids (:attr:`pack`), so every preset shares the ids and layouts."""
        return 33 if self.joker else 32

    @cached_property
    def pack(self) -> tuple[int, ...]:
        """The card ids of the pack, ascending: :attr:`suits` suits of the :attr:`ranks` highest
        ranks, then the joker under ``normand``."""
        suited = tuple(s * 8 + r for s in range(self.suits) for r in range(8 - self.ranks, 8))
        return (*suited, 32) if self.joker else suited

    @cached_property
    def pack_mask(self) -> int:
        """The pack as a card bitmask (bit ``c`` for each card id of :attr:`pack`)."""
        return sum(1 << c for c in self.pack)

    @property
    def pack_size(self) -> int:
        """Cards in the pack: 32, 33 with the joker, 9 under ``mini``."""
        return self.suits * self.ranks + (1 if self.joker else 0)

    @property
    def talon_size(self) -> int:
        """Cards left after dealing :attr:`hand_size` to each player (8 of 32)."""
        return self.pack_size - 2 * self.hand_size

    @property
    def younger_part(self) -> int:
        """Cards of the talon reserved for younger: those below elder's part (3, or 4 under
        ``normand``)."""
        return self.talon_size - self.elder_part

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


_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "base": (str,),
    "variants": (tuple,),
    "exchange": (bool,),
    "deals": (int,),
    "joker": (bool,),
    "suits": (int,),
    "ranks": (int,),
    "hand_size": (int,),
    "elder_part": (int,),
    "elder_max_exchange": (int,),
    "younger_min_exchange": (int,),
    "younger_max_exchange": (int, type(None)),
    "carte_blanche": (bool,),
    "trick_scoring": (str,),
    "repique_reckoning": (str,),
    "settlement": (str,),
    "tie_break_deals": (bool,),
}
"""The type each :class:`Rules` field must have (an int field refuses bools and floats)."""


def _field_text(value: object) -> str:
    """A field's value as a name writes it: ``true``/``false``, ``none``, an int, a word."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "none" if value is None else str(value)


def _field_value(name: str, text: str) -> object:
    """A field's value read from a name (:func:`_field_text` reversed), typed by the field."""
    t = text.strip().lower()
    types = _FIELD_TYPES.get(name)
    if types is None or name in ("base", "variants"):
        settable = sorted(set(_FIELD_TYPES) - {"base", "variants"})
        raise ValueError(f"unknown rule field {name!r} in brackets; the fields are {settable}")
    if t == "none" and type(None) in types:
        return None
    if bool in types:
        if t not in ("true", "false"):
            raise ValueError(f"rule field {name} must be true or false, got {text!r}")
        return t == "true"
    if int in types:
        try:
            return int(t)
        except ValueError:
            raise ValueError(f"rule field {name} must be an int, got {text!r}") from None
    return t


def _overrides(text: str) -> dict[str, object]:
    """The ``[field=value,...]`` part of a preset name as field values."""
    out: dict[str, object] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        name, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"a rule field in brackets is name=value, got {item!r}")
        name = name.strip().lower()
        if name in out:
            raise ValueError(f"rule field {name} given twice in [{text}]")
        out[name] = _field_value(name, value)
    return out


def _check_type(name: str, value: object, types: tuple[type, ...]) -> None:
    """A ``ValueError`` naming the field unless ``value``'s type is one of ``types`` exactly (a
    bool is no int here, nor is a float or a numpy integer: rules are plain values)."""
    if type(value) in types:
        return
    wanted = " or ".join("None" if t is type(None) else t.__name__ for t in types)
    raise ValueError(f"Rules.{name} must be {wanted}, got {value!r} ({type(value).__name__})")


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

RULE_SET_RULES: Mapping[str, Rules] = MappingProxyType({"standard": STANDARD, "classic": CLASSIC})
"""Each rule set's switches, by name (:data:`RULE_SETS` in order)."""

VARIANT_CHANGES: Mapping[str, Mapping[str, object]] = MappingProxyType(
    {
        "orbis": MappingProxyType({"exchange": False}),
        "saison": MappingProxyType({"deals": 12}),
        "normand": MappingProxyType({"joker": True}),
        "mini": MappingProxyType({"suits": 3, "ranks": 3, "hand_size": 4, "elder_part": 1}),
    }
)
"""What each variant changes, as :class:`Rules` fields and their values, in canonical order (the
order of :data:`VARIANTS` and of a preset's name). Variants change disjoint fields, so they
combine in any order; a variant is added here and nowhere else (the development page's
checklist)."""

assert tuple(VARIANT_CHANGES) == VARIANTS, "VARIANTS lists VARIANT_CHANGES' keys in order"


def make_rules(preset: str | Rules = "standard", variants: str | Iterable[str] = ()) -> Rules:
    """Rules for a rule set plus variants, e.g. ``make_rules("classic", ["normand"])``.

    ``preset`` may itself carry variants joined by ``+`` (``"standard+orbis"``; a variant alone,
    ``"mini"``, is under the standard rules) and fields set in brackets after them
    (``"mini[suits=2,hand_size=2]"``, as :attr:`Rules.name` writes rules built field by field),
    or be a :class:`Rules` (returned as is when no variants are added). ``variants`` is a list of
    names, or one name or ``+``-joined string (``"orbis+saison"``). Unknown names and repeated
    variants raise ``ValueError``; what each variant changes is :data:`VARIANT_CHANGES`.
    """
    if isinstance(preset, Rules):
        base_rules, extra = preset, list(preset.variants)
    else:
        if not isinstance(preset, str):
            raise TypeError(f"rules preset must be a name or Rules, got {type(preset).__name__}")
        preset, bracket, fields_text = preset.partition("[")
        if bracket:
            if not fields_text.rstrip().endswith("]"):
                raise ValueError(f"rule fields open with '[' and close with ']': {preset}[...")
            custom = _overrides(fields_text.rstrip()[:-1])
            made = make_rules(preset, variants)
            return replace(made, **custom) if custom else made
        head, *extra = [p.strip().lower() for p in preset.split("+")]
        if head in VARIANTS:  # a variant alone is played under the standard rules: "mini"
            head, extra = "standard", [head, *extra]
        if head not in RULE_SETS:
            raise ValueError(f"unknown rules preset {head!r}; expected one of {RULE_SETS}")
        base_rules = RULE_SET_RULES[head]
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
    changes: dict[str, object] = {"variants": tuple(v for v in VARIANTS if v in names)}
    for v in changes["variants"]:
        changes.update(VARIANT_CHANGES[v])
    return replace(base_rules, **changes)


def all_presets() -> list[Rules]:
    """Every rule set with every combination of variants (2 x 2 ** len(VARIANTS) rule objects),
    rule set first, then the variants' subsets in :data:`VARIANTS` order."""
    return [
        make_rules(base, [v for i, v in enumerate(VARIANTS) if bits >> i & 1])
        for base in RULE_SETS
        for bits in range(2 ** len(VARIANTS))
    ]
