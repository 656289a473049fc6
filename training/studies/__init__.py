"""The scripts behind the results pages (``python -m piquet_training.studies.NAME``).

- :mod:`.exact_curves`: exact NashConv curves of training runs beside CFR+ (``exact-curves.png``);
- :mod:`.exact_coverage`: how often a match's 95% interval holds the exact truth on `mini`;
- :mod:`.exploit_causes`: what an exploiter's observation and network can hold of the exact best
  response on `mini` (information and capacity), and a trained exploiter's exact value;
- :mod:`.every_deal`: agents against a target on every deal of `mini`, both seats (no deal luck);
- :mod:`.expert_iteration`: the exploiter's search as teacher, its network as pupil, round by round;
- :mod:`.fanout_speed`: a match's time here, in worker processes and on a local Ray instance;
- :mod:`.rllib_exploit_speed`: the RLlib exploiter's env steps/s on one env runner, on the
  batched engine and on the PettingZoo env, beside the built-in collector, and its profile;
- :mod:`.rllib_both_speed`: RLlib self-play with both seats learning on one env runner, RLlib's
  sync vector of PettingZoo envs against the batched engine, beside the built-in collector.
"""
