"""The runner: trials of a real agent in fresh workspaces."""
