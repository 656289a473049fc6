"""The built-in self-play trainer: PPO on the batched engine.

- :mod:`.trainer`: :func:`~piquet_training.ppo.trainer.train`, one run read top to bottom;
- :mod:`.update`: PPO's update (clipped objective, value loss, entropy, the magnet's KL);
- :mod:`.magnet`: the regularising magnet policy and its schedules;
- :mod:`.imitation`: the warm start that imitates the heuristic;
- :mod:`.collector` and :mod:`.vector_collector`: self-play rollouts, game by game and batched;
- :mod:`.chunks`: an update's games collected by numbered chunks, each from its own seed, here
  or fanned out through the evaluation's executor, gathered in order;
- :mod:`.pool`: the training opponents (the learner, its snapshots, agents from specs);
- :mod:`.compute`: the device and precision;
- :mod:`.resume`: a run's saved state, restored bit for bit, and the resume check of its files
  (the files themselves: :mod:`piquet_training.run_log`; the folder:
  :mod:`piquet_training.run_folder`);
- :mod:`.console`: the run's terminal;
- :mod:`.curve`: the learning curve drawn from the run's files;
- :mod:`.summary`: the end-of-run summary.
"""
