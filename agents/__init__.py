"""Agents that play Piquet behind one protocol: random, heuristic, search and PyTorch policies."""
