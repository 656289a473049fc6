"""Names that the dead-code check (vulture, run by .ci/run) must not report: each is called by
a library or a protocol, not by our code, or is public API documented for users.

Regenerate candidates with ``vulture --make-whitelist`` and keep only names that belong here.
"""

# ruff: noqa: B018, F821
# Python's and the libraries' hooks
__getattr__  # module-level lazy imports (PEP 562): piquet_env, piquet_env.adapters
_.forward  # torch.nn.Module (agents/network.py)
_.close_extras  # gymnasium.vector.VectorEnv.close calls it
_._np_random_seed  # read by gymnasium.VectorEnv.np_random_seed
_.writeable  # numpy's read-only flag, set on the observation buffers
# OpenSpiel's Python game and bot API (piquet_env/adapters/openspiel.py)
_.make_py_observer
_._legal_actions
_._apply_action
_._action_to_string
_.restart_at
_.set_from
_.string_from
# RLCard's Env and Game interface (piquet_env/adapters/rlcard.py)
_.init_game
_.get_num_players
_.get_num_actions
_._extract_state
_._decode_action
# Ray RLlib's RLModule and callbacks (training/rllib/)
_._forward
_._forward_train
_.on_episode_step  # RLlibCallback hook (training/rllib/exploit.py)
_.on_sample_end  # RLlibCallback hook (training/rllib/exploit.py)
_.get_observation_space  # MultiAgentEnv API RLlib's runner calls (training/rllib/both_seats.py)
_.get_action_space  # MultiAgentEnv API RLlib's runner calls (training/rllib/both_seats.py)
_._increase_sampled_metrics  # MultiAgentEnvRunner hook overridden (training/rllib/both_seats.py)
_._needs_initial_reset  # MultiAgentEnvRunner's flag, read by its sample (rllib/both_seats.py)
# The narrator's event handlers, dispatched by event name (training/table/narrate.py)
_._partie
_._deal_end
_._tie_break
# The docs site's hooks (docs/_scripts/, named in mkdocs.yml): called by MkDocs and griffe
on_page_markdown
RestructuredText
_.on_package
pytest_collection_modifyitems  # pytest's hook (tests/conftest.py: the xdist groups)
pytest_configure  # pytest's hook (tests/conftest.py: refuses a loadgroup that loses its groups)
_.should_exit  # uvicorn.Server: set to stop the test server (tests/web_helpers.py)
_.close_timeout  # read by uvicorn's WebSocket protocol (training/table/web/server.py)
# pexpect's settings (tests/pty_helpers.py) and optional imports probed by the tests
_.logfile_read
_.delaybeforesend
agilerl
tianshou
torchrl
local_env_runner
module_spec
# Public API: documented constants and fields users read
ACE  # piquet_env.cards rank index
RESET_OPTION_KEYS  # piquet_env.piquet_v0: the reset options the env reads
EVAL_KINDS  # piquet_training.run_log: eval.csv's kinds
a_seat  # GameResult field (training/evaluation/duplicate.py)
evaluations  # TrainResult field (training/ppo/trainer.py)
summarize  # piquet_table.results: a summary of record documents (its doctest)
fixed_opponent  # piquet_training.ppo.trainer: deprecated public name (resolve_opponent replaces it)
# The dataclass machinery reads a class's annotations (piquet_training.settings.schema: DEFAULTS)
_.__annotations__
