"""Joins a job from the environment (JAX_COORDINATOR_ADDRESS, ...) and prints the topology."""

import meshify.runtime as mr

print(mr.initialize(), flush=True)
