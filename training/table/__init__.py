"""The tables people play at: in the terminal, ``piquet play`` (:mod:`.session`) and ``piquet
replay`` (:mod:`.replay`); in the browser, :mod:`.web`; and their results, :mod:`.results`.

:mod:`.text` formats cards, hands and scores; :mod:`.narrate` turns the engine's events into
sentences for one reader; :mod:`.input` parses what a player types; :mod:`.signals` ends a game
cleanly on Ctrl-C, SIGTERM or SIGHUP. Reading and writing game records is
:mod:`piquet_env.game.record`'s job. :mod:`.web` is the same table in the browser (``piquet
serve``, the ``web`` extra); :mod:`.results` sums up people's games against each agent from their
records (``piquet humans``), with the statistics of :mod:`piquet_training.evaluation.stats`,
which need no ``train`` extra.
"""
