"""meshify against XLA's automatic partitioner and hand-written shard_map (see run.py)."""
